// Unit tests of the functions of the live view that turn numbers into what the page shows (node --test; make lint).
// The page's formatter against Python's, over thousands of values: tests/show/test_view.py
// (test_the_page_formats_numbers_as_python_does).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  colourOf,
  exactDecimal,
  formatValue,
  inkOn,
  luminance,
  readMatrix,
  roundDigits,
} from "../../attnlib/show/static/heatmap.js";

test("an exact zero is 0 at any number of decimals, as in the PNG", () => {
  for (const decimals of [0, 2, 4]) {
    assert.equal(formatValue(0, decimals), "0");
    assert.equal(formatValue(-0, decimals), "0");
  }
});

test("numbers get their decimals; too small or too large ones 2 significant digits in exponent form", () => {
  assert.equal(formatValue(0.25, 2), "0.25");
  assert.equal(formatValue(-1.5, 3), "-1.500");
  assert.equal(formatValue(0.0009, 2), "9.0e-04");
  assert.equal(formatValue(-3.3e-17, 4), "-3.3e-17");
  assert.equal(formatValue(123456, 2), "1.2e+05");
  assert.equal(formatValue(99999.999, 2), "100000.00"); // below 1e5: fixed, as Python
});

test("ties round to even, as Python's format does (toFixed rounds them away from zero)", () => {
  assert.equal((0.125).toFixed(2), "0.13");
  assert.equal(formatValue(0.125, 2), "0.12");
  assert.equal(formatValue(0.375, 2), "0.38");
  assert.equal(formatValue(2.5, 0), "2");
  assert.equal(formatValue(125000, 2), "1.2e+05");
  assert.equal(formatValue(1.005, 2), "1.00"); // not a tie: 1.005 is 1.00499999… in binary
});

test("exactDecimal gives a double's exact digits, roundDigits rounds them half to even", () => {
  assert.deepEqual(exactDecimal(0.125), ["0", "125"]);
  assert.deepEqual(exactDecimal(1e21), ["1000000000000000000000", ""]);
  assert.equal(exactDecimal(5e-324), null);
  assert.equal(roundDigits("125", 2), "12");
  assert.equal(roundDigits("135", 2), "14");
  assert.equal(roundDigits("1251", 2), "13");
  assert.equal(roundDigits("995", 2), "100");
});

test("colourOf maps the limits to the palette's ends and clamps beyond them", () => {
  const pal = ["#000000", "#555555", "#aaaaaa", "#ffffff"];
  assert.equal(colourOf(0, 0, 1, pal), "#000000");
  assert.equal(colourOf(1, 0, 1, pal), "#ffffff");
  assert.equal(colourOf(0.5, 0, 1, pal), "#aaaaaa");
  assert.equal(colourOf(-3, 0, 1, pal), "#000000");
  assert.equal(colourOf(7, 0, 1, pal), "#ffffff");
  assert.equal(colourOf(2, 2, 2, pal), "#aaaaaa"); // equal limits: the middle
});

test("readMatrix decodes the little-endian float64 buffer row by row", () => {
  const flat = new Float64Array([1, 2, 3, 4, 5, 6]);
  const state = { buffer: new DataView(flat.buffer), shape: [2, 3] };
  const model = { get: (name) => state[name] };
  assert.deepEqual(readMatrix(model), {
    rows: [
      [1, 2, 3],
      [4, 5, 6],
    ],
    nRows: 2,
    nCols: 3,
  });
  assert.deepEqual(readMatrix({ get: (name) => ({ shape: [0, 0] })[name] }), { rows: [], nRows: 0, nCols: 0 });
});

test("luminance is WCAG 2's: 0 for black, 1 for white, 0.2126 for pure red", () => {
  assert.equal(luminance([0, 0, 0]), 0);
  assert.equal(luminance([255, 255, 255]), 1);
  assert.ok(Math.abs(luminance([255, 0, 0]) - 0.2126) < 1e-12);
});

test("a number's ink contrasts 4.5:1 or more with any cell colour, and is the more contrasting of the two", () => {
  const ratio = (/** @type {number} */ a, /** @type {number} */ b) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  let worst = Infinity;
  for (let r = 0; r <= 255; r += 15)
    for (let g = 0; g <= 255; g += 15)
      for (let b = 0; b <= 255; b += 15) {
        const l = luminance([r, g, b]);
        const ink = inkOn([r, g, b]);
        const [mine, other] = ink === "#000" ? [ratio(l, 0), ratio(l, 1)] : [ratio(l, 1), ratio(l, 0)];
        assert.ok(mine >= other, `${ink} on rgb(${r},${g},${b})`);
        worst = Math.min(worst, mine);
      }
  assert.ok(worst >= 4.5, `worst contrast ${worst}`);
  assert.equal(inkOn([127, 127, 127]), "#000"); // the old rule (0.299 r + 0.587 g + 0.114 b ≤ 127.5) wrote white, 4.0:1
});
