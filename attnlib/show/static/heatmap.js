// @ts-check
// A heatmap of an explorer's front end (explorer.js): a matrix drawn as SVG from the numbers attnlib computes
// (attnlib/show/view.py, HeatmapView.drawn). The frame (title, labels, colour bar) is laid out again when
// something moves, in the elements it already has; the grid's cells (a rectangle and, when annotated, a number
// each) are kept from one change to the next and recoloured; a matrix of more than VECTOR_MAX cells is a canvas
// of one pixel per cell instead.
// The view is not a widget: createHeatmap(el, host) returns {draw(state)}, and its host (the explorer) carries
// what the view sends ({kind: "edit", row, col, text}: a number typed into a cell; {kind: "select", row, col}: a
// cell clicked or chosen with Enter / Space) and answers host.explain(row, col) (a cell's explanation, or "").

/**
 * @typedef Model
 * @prop {DataView | ArrayBuffer | null} buffer  the matrix: little-endian float64, row by row
 * @prop {number[]} shape
 * @prop {string[]} row_labels
 * @prop {string[]} col_labels
 * @prop {string} title
 * @prop {string} xlabel
 * @prop {string} ylabel
 * @prop {boolean} annotate
 * @prop {number} decimals
 * @prop {number} precision
 * @prop {number} vmin
 * @prop {number} vmax
 * @prop {string[]} palette
 * @prop {number[]} highlight_rows
 * @prop {number[]} highlight_cols
 * @prop {number[][]} highlight_cells
 * @prop {boolean} explained
 * @prop {boolean} editable
 * @prop {string} message
 * @prop {string} description
 * @prop {number} font_size
 * @prop {number} cell_size
 * @prop {string} highlight_color
 * @prop {number} line_width
 */
/** @typedef {{get: <K extends keyof Model>(name: K) => Model[K]}} Drawn what a draw reads */
/** @typedef {{send: (msg: Record<string, unknown>) => void, explain: (row: number, col: number) => Promise<string>,
 *   asks: () => boolean}} Host what the view needs of its explorer */
/** @typedef {[number, number]} Cell */
/** @typedef {{rows: number[][], nRows: number, nCols: number}} Matrix */
/** @typedef {{key: string, nRows: number, nCols: number, cell: number, x0: number, y0: number,
 *   gridW: number, gridH: number, title: SVGTextElement, ticks: SVGTextElement[]}} Geometry */

const SVG = "http://www.w3.org/2000/svg";
const HOVER_COLOUR = "#ff8c00";
// more cells than this are one pixel each on a canvas, scaled up without smoothing: restyling and
// painting thousands of rectangles per change costs more (docs/performance.md, lesson 12)
const VECTOR_MAX = 1024;
// how to move in a grid, read after its description (view.py's _describe: what it shows, its shape, its range)
const KEYS_HINT =
  "Arrow keys move between cells, Home and End to a row's ends; each cell is read out with its explanation. " +
  "Enter or Space chooses a cell. The table button lists every number.";

// ---------------------------------------------------------------------------------------- numbers
/** The number written in a cell, the tooltip or the table, exactly as Python's
 * `attnlib.formatting.annotation(v, decimals)` writes it (tests/show/test_view.py's
 * test_the_page_formats_numbers_as_python_does runs both): `decimals`
 * digits; zero is `0`; 2 significant digits in exponent form where that would show 0 or be too wide
 * (`9.0e-04`, `3.3e-17`, `1.2e+05`). Rounding is Python's: the exact binary value, ties to even.
 * @param {number} v @param {number} decimals */
export function formatValue(v, decimals) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const sign = v < 0 ? "-" : "";
  const a = Math.abs(v);
  // no tie at `decimals` digits unless a · 2^(decimals+1) is a whole number (a tie, k + 1/2 units of the last digit,
  // has at most decimals + 1 binary fraction digits): then toFixed's nearest, from the exact binary value, is Python's
  if (a >= 10 ** -decimals && a < 1e5 && !Number.isInteger(a * 2 ** (decimals + 1))) return sign + a.toFixed(decimals);
  const exact = exactDecimal(a);
  if (!exact) {
    // more than 100 fraction digits: a value this small is never a tie at 2 significant digits (its 5s in the
    // denominator outnumber any 3-digit mantissa's), so toExponential's nearest is Python's
    return sign + a.toExponential(1).replace(/e([+-])(\d)$/, "e$10$2");
  }
  const [int, frac] = exact;
  if (a < 10 ** -decimals || a >= 1e5) {
    const digits = int + frac;
    const first = digits.search(/[1-9]/);
    let exponent = int.length - 1 - first;
    let kept = roundDigits(digits.slice(first), 2);
    if (kept.length > 2) [kept, exponent] = [kept.slice(0, 2), exponent + 1];
    const e = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${kept[0]}.${kept[1]}e${exponent < 0 ? "-" : "+"}${e}`;
  }
  const kept = roundDigits(int + frac, int.length + decimals);
  const whole = kept.slice(0, kept.length - decimals).replace(/^0+(?=\d)/, "") || "0";
  return sign + whole + (decimals > 0 ? `.${kept.slice(kept.length - decimals)}` : "");
}

/** The exact decimal expansion of a finite `a >= 0`, its integer digits and its fraction's digits, or `null`
 * when the fraction has more than 100 digits (as many as `a` has fraction bits).
 * @param {number} a @returns {[string, string] | null} */
export function exactDecimal(a) {
  if (a >= 1e21) return [BigInt(a).toString(), ""];
  let bits = 0;
  while (bits <= 100 && !Number.isInteger(a * 2 ** bits)) bits += 1; // a · 2^bits is exact: no rounding here
  if (bits > 100) return null;
  const [int, frac] = a.toFixed(100).split(".");
  return [int, frac.replace(/0+$/, "")];
}

/** The first `n` of `digits` (a decimal digit string), rounded half to even on the rest; one digit more when
 * rounding carries (`"99…"` → `"100"`).
 * @param {string} digits @param {number} n */
export function roundDigits(digits, n) {
  const kept = digits.slice(0, n).padEnd(n, "0");
  const rest = digits.slice(n);
  const tie = /^50*$/.test(rest);
  const up = rest[0] > "5" || (rest[0] === "5" && !tie) || (tie && Number(kept[n - 1] ?? 0) % 2 === 1);
  return up ? (BigInt(kept || "0") + 1n).toString().padStart(n, "0") : kept;
}

/** @param {string} hex @returns {[number, number, number]} */
function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** WCAG 2's relative luminance of an sRGB colour (0: black, 1: white). @param {[number, number, number]} rgb */
export function luminance([r, g, b]) {
  const linear = (/** @type {number} */ c) =>
    c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4;
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The ink of a number written on a cell of colour `rgb`: black or white, whichever contrasts more (WCAG 2's
 * ratio; at least 4.58:1 on any colour, above the 4.5:1 that 1.4.3 asks of text). @param {[number, number, number]} rgb */
export function inkOn(rgb) {
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
}

/** The palette entry (of `n`) that shows `v` between `lo` and `hi`, clamped.
 * @param {number} v @param {number} lo @param {number} hi @param {number} n */
export function colourIndex(v, lo, hi, n) {
  let t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  if (!Number.isFinite(t)) t = v > 0 ? 1 : 0;
  t = Math.min(1, Math.max(0, t));
  return Math.min(n - 1, Math.floor(t * n));
}

/** @template T @param {number} v @param {number} lo @param {number} hi @param {T[]} pal */
export function colourOf(v, lo, hi, pal) {
  return pal[colourIndex(v, lo, hi, pal.length)];
}

/** @param {Drawn} model @returns {Matrix} */
export function readMatrix(model) {
  const buffer = model.get("buffer");
  const [nRows, nCols] = model.get("shape") || [0, 0];
  const flat =
    buffer && buffer.byteLength
      ? new Float64Array(
          ArrayBuffer.isView(buffer)
            ? buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength)
            : buffer,
        )
      : new Float64Array(0);
  const rows = [];
  for (let i = 0; i < nRows; i++) rows.push(Array.from(flat.subarray(i * nCols, (i + 1) * nCols)));
  return { rows, nRows, nCols: nRows ? nCols : 0 };
}

// ---------------------------------------------------------------------------------------- elements
/** @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, string>} [attributes] @param {string} [text] */
export function html(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

/** @template {keyof SVGElementTagNameMap} K
 * @param {K} name @param {Record<string, string | number>} [attributes] @param {string} [text] */
function svg(name, attributes = {}, text = "") {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  if (text) node.textContent = text;
  return node;
}

/** @param {HTMLElement} el */
function buildParts(el) {
  const root = html("div", { class: "attn-heatmap", "data-lm-suppress-shortcuts": "true" });
  const tableId = `attn-table-${Math.random().toString(36).slice(2)}`;
  const tableToggle = html(
    "button",
    { type: "button", class: "attn-heatmap-table-toggle", "aria-pressed": "false", "aria-controls": tableId },
    "table",
  );
  const toolbar = html("div", { class: "attn-heatmap-toolbar" });
  toolbar.append(tableToggle);
  const figure = html("div", { class: "attn-heatmap-figure" });
  const frame = svg("svg", { class: "attn-heatmap-svg", "aria-hidden": "true" });
  const desc = html("p", { class: "attn-heatmap-description", id: "attn-desc-" + Math.random().toString(36).slice(2) });
  const hint = html("p", { class: "attn-heatmap-description", id: `${desc.id}-keys` }, KEYS_HINT);
  const grid = svg("svg", {
    class: "attn-heatmap-grid",
    tabindex: 0,
    role: "application",
    "aria-roledescription": "heatmap",
    "aria-describedby": `${desc.id} ${hint.id}`,
  });
  const cells = svg("g", { class: "attn-cells", "shape-rendering": "crispEdges" });
  const numbers = svg("g", { class: "attn-numbers", "text-anchor": "middle", "dominant-baseline": "central" });
  const highlights = svg("g", { class: "attn-highlights", fill: "none", "shape-rendering": "crispEdges" });
  const outline = svg("g", {
    class: "attn-outline",
    fill: "none",
    stroke: HOVER_COLOUR,
    "stroke-width": 2,
    "shape-rendering": "crispEdges",
  });
  grid.append(cells, numbers, highlights, outline);
  const tooltip = html("div", { class: "attn-heatmap-tooltip", role: "tooltip" });
  tooltip.hidden = true;
  const pixels = html("canvas", { class: "attn-heatmap-pixels", "aria-hidden": "true" });
  pixels.hidden = true;
  const around = frameParts(frame);
  // the figure scrolls where the page is narrower than the heatmap (a phone, 200 % zoom); the tooltip is beside it,
  // over the page, so that showing it never adds a scroll bar
  figure.append(frame, pixels, grid);
  const tableBox = html("div", { class: "attn-heatmap-table", id: tableId });
  tableBox.hidden = true;
  const message = html("div", { class: "attn-heatmap-message", role: "status", "aria-live": "polite" });
  const live = html("p", { class: "attn-heatmap-description", "aria-live": "polite" });
  root.append(toolbar, figure, tooltip, tableBox, message, desc, hint, live);
  el.appendChild(root);
  return {
    root,
    tableToggle,
    figure,
    frame,
    around,
    pixels,
    grid,
    cells,
    numbers,
    highlights,
    outline,
    tooltip,
    tableBox,
    message,
    desc,
    live,
  };
}

/** @param {HTMLElement} el @param {Host} host */
function createView(el, host) {
  /** @type {Partial<Model>} */
  const state = {};
  /** @type {Drawn} */
  const model = {
    get(name) {
      return /** @type {any} */ (state[name]);
    },
  };
  return {
    model,
    state,
    host,
    parts: buildParts(el),
    matrix: readMatrix(model),
    /** @type {Geometry | null} */ geometry: null,
    /** @type {SVGRectElement[]} */ rects: [],
    /** @type {SVGTextElement[]} */ texts: [],
    /** @type {SVGTextElement[]} the row labels shown */ rowLabels: [],
    /** @type {SVGTextElement[]} the column labels shown */ colLabels: [],
    /** @type {Cell} the keyboard's cell */ focused: [0, 0],
    /** @type {Cell | null} the pointer's cell */ hover: null,
    /** @type {Cell | null} the cell the tooltip shows */ tipped: null,
    /** @type {HTMLInputElement | null} */ editor: null,
    asked: 0, // explanations asked for: only the latest answer is shown
  };
}
/** @typedef {ReturnType<typeof createView>} View */

// ---------------------------------------------------------------------------------------- frame
/** What moves something when it changes (sizes, labels, style). @param {View} v */
function frameKey(v) {
  const m = v.model;
  return JSON.stringify([
    v.matrix.nRows,
    v.matrix.nCols,
    m.get("row_labels"),
    m.get("col_labels"),
    Boolean(m.get("title")),
    m.get("xlabel"),
    m.get("ylabel"),
    m.get("font_size"),
    m.get("annotate"),
    m.get("cell_size"),
    m.get("palette"),
    formatValue(m.get("vmin"), 2).length,
    formatValue(m.get("vmax"), 2).length,
  ]);
}

/** The title, the labels and the colour bar around the grid, and the grid's cells. Every element of the frame is
 * kept from one frame to the next (a label pool, one colour bar per palette) and only what differs is written:
 * a new example's frame moves elements instead of creating them. @param {View} v @param {string} key */
function buildFrame(v, key) {
  const m = v.model;
  const { nRows, nCols } = v.matrix;
  const rows = m.get("row_labels") || [];
  const cols = m.get("col_labels") || [];
  const fontSize = m.get("font_size");
  const cell = m.get("cell_size");
  v.parts.root.style.setProperty("--attn-font-size", fontSize + "px");
  const charW = fontSize * 0.6;
  const rotate = nCols > 8;
  const labelW = Math.max(1, ...rows.map((r) => String(r).length)) * charW + 8;
  const colLabelH = rotate ? Math.max(1, ...cols.map((c) => String(c).length)) * charW + 8 : fontSize + 8;
  const x0 = Math.round((m.get("ylabel") ? fontSize + 8 : 0) + labelW);
  const y0 = Math.round(m.get("title") ? fontSize * 1.2 + 10 : 4);
  const gridW = nCols * cell;
  const gridH = nRows * cell;
  const barX = x0 + gridW + 14;
  const barW = Math.max(10, fontSize);
  const tickW = Math.max(formatValue(m.get("vmin"), 2).length, formatValue(m.get("vmax"), 2).length) * charW + 10;
  const width = barX + barW + tickW;
  const height = y0 + gridH + colLabelH + (m.get("xlabel") ? fontSize + 8 : 0) + 4;
  const step = Math.max(1, Math.ceil((fontSize * 1.1) / cell)); // small cells: every k-th label
  const f = v.parts.around;

  placeText(f.title, { x: x0 + gridW / 2, y: fontSize * 1.2, "font-size": fontSize * 1.1 });
  const shownRows = Array.from({ length: Math.ceil(nRows / step) }, (_, k) => k * step);
  fitPool(f.rowLabels, v.rowLabels, shownRows.length, () =>
    svg("text", { class: "attn-row-label", x: 0, y: 0, "text-anchor": "end", "dominant-baseline": "central" }),
  );
  shownRows.forEach((i, k) => {
    placeText(v.rowLabels[k], { x: x0 - 4, y: y0 + (i + 0.5) * cell }, String(rows[i] ?? i + 1));
  });
  // rotated: (x, y) in the group is (y, -x) on screen
  setOrRemove(f.colLabels, "transform", rotate ? "rotate(-90)" : null);
  const shownCols = Array.from({ length: Math.ceil(nCols / step) }, (_, k) => k * step);
  fitPool(f.colLabels, v.colLabels, shownCols.length, () =>
    svg("text", { class: "attn-col-label", x: 0, y: 0, "text-anchor": "middle", "dominant-baseline": "central" }),
  );
  const cy = y0 + gridH + 4;
  shownCols.forEach((j, k) => {
    const cx = x0 + (j + 0.5) * cell;
    const at = rotate
      ? { x: -cy, y: cx, "text-anchor": "end" }
      : { x: cx, y: cy + fontSize * 0.5, "text-anchor": "middle" };
    placeText(v.colLabels[k], at, String(cols[j] ?? j + 1));
  });
  const xlabel = m.get("xlabel") || "";
  const ylabel = m.get("ylabel") || "";
  placeText(f.xlabel, { x: x0 + gridW / 2, y: height - 6 }, xlabel);
  setOrRemove(f.xlabel, "display", xlabel ? null : "none");
  const mid = y0 + gridH / 2;
  placeText(f.ylabel, { x: fontSize, y: mid, transform: `rotate(-90 ${fontSize} ${mid})` }, ylabel);
  setOrRemove(f.ylabel, "display", ylabel ? null : "none");
  placeBar(f.bar, m, barX, y0, barW, gridH);
  [y0, y0 + gridH / 2, y0 + gridH].forEach((y, k) => {
    placeText(f.ticks[k], { x: barX + barW + 4, y, "font-size": fontSize * 0.85 });
  });
  const frame = v.parts.frame;
  for (const [k, val] of Object.entries({ width, height, viewBox: `0 0 ${width} ${height}`, "font-size": fontSize }))
    setAttribute(frame, k, String(val));
  buildGrid(v, cell, gridW, gridH, x0, y0);
  v.geometry = { key, nRows, nCols, cell, x0, y0, gridW, gridH, title: f.title, ticks: f.ticks };
  v.focused = [Math.min(v.focused[0], Math.max(0, nRows - 1)), Math.min(v.focused[1], Math.max(0, nCols - 1))];
  v.hover = null;
}

/** The parts of the frame that stay: the title, the label pools' layers, the axis labels, the colour bar, the
 * three ticks; in the frame in this order. @param {SVGSVGElement} frame */
function frameParts(frame) {
  const title = svg("text", { class: "attn-title", x: 0, y: 0, "text-anchor": "middle", "font-size": 0 });
  const rowLabels = svg("g");
  const colLabels = svg("g");
  const xlabel = svg("text", { class: "attn-axis-label", x: 0, y: 0, "text-anchor": "middle" });
  const ylabel = svg("text", { class: "attn-axis-label", x: 0, y: 0, transform: "", "text-anchor": "middle" });
  const bar = colourBar();
  const ticks = [0, 1, 2].map(() =>
    svg("text", { class: "attn-tick", x: 0, y: 0, "dominant-baseline": "central", "font-size": 0 }),
  );
  frame.append(title, rowLabels, xlabel, ylabel, colLabels, bar.root, ...ticks);
  return { title, rowLabels, colLabels, xlabel, ylabel, bar, ticks };
}

/** @param {Element} node @param {Record<string, string | number>} attributes @param {string} [text] */
function placeText(node, attributes, text) {
  for (const [k, val] of Object.entries(attributes)) setAttribute(node, k, String(val));
  if (text !== undefined) setText(node, text);
}

/** @param {Element} node @param {string} name @param {string | null} value (null: no such attribute) */
function setOrRemove(node, name, value) {
  if (value === null) node.removeAttribute(name);
  else setAttribute(node, name, value);
}

/** The colour bar's elements: its bands in a layer of their own and its outline; `palette`: the one its bands
 * show (none yet). */
function colourBar() {
  const root = svg("g", { class: "attn-colorbar" });
  const bands = svg("g", { "shape-rendering": "crispEdges", transform: "" });
  const outline = svg("rect", { x: 0, y: 0, width: 0, height: 0, fill: "none", stroke: "#444", "stroke-width": 0.5 });
  root.append(bands, outline);
  return { root, bands, outline, /** @type {SVGRectElement[]} */ rects: [], /** @type {string} */ palette: "" };
}

/** The colour bar at (x, y), w × h: top = vmax. Its bands are recoloured when the palette changes, in units of one
 * band (band k spans rows k to the bottom, so that each one covers the seam under the next), and scaled into
 * place. @param {ReturnType<typeof colourBar>} bar @param {Drawn} model @param {number} x @param {number} y
 * @param {number} w @param {number} h */
function placeBar(bar, model, x, y, w, h) {
  const pal = palette(model).rgb;
  const steps = Math.min(pal.length, 64);
  const shows = String(model.get("palette"));
  if (bar.palette !== shows) {
    bar.palette = shows;
    fitPool(bar.bands, bar.rects, steps, () => svg("rect", { x: 0, width: 1 }));
    bar.rects.forEach((band, k) => {
      const [r, g, b] = pal[Math.floor(((steps - 1 - k) / steps) * pal.length)];
      placeText(band, { y: k, height: steps - k, fill: `rgb(${r},${g},${b})` });
    });
  }
  setAttribute(bar.bands, "transform", `translate(${x} ${y}) scale(${w} ${h / Math.max(1, steps)})`);
  placeText(bar.outline, { x, y, width: w, height: h });
}

/** One rectangle (a unit square, scaled by its layer) and, when annotated, one number per cell; kept
 * while the shape, the cell size and the annotation stay (a new frame alone moves only the grid).
 * @param {View} v @param {number} cell @param {number} gridW @param {number} gridH @param {number} x0 @param {number} y0 */
function buildGrid(v, cell, gridW, gridH, x0, y0) {
  const { grid, cells, numbers } = v.parts;
  const { nRows, nCols } = v.matrix;
  for (const [k, val] of Object.entries({ width: gridW, height: gridH, viewBox: `0 0 ${gridW} ${gridH}` }))
    setAttribute(grid, k, String(val));
  if (grid.style.left !== x0 + "px") grid.style.left = x0 + "px";
  if (grid.style.top !== y0 + "px") grid.style.top = y0 + "px";
  const annotate = Boolean(v.model.get("annotate"));
  const key = JSON.stringify([nRows, nCols, cell, annotate]);
  if (grid.getAttribute("data-shows") === key) return;
  grid.setAttribute("data-shows", key);
  Object.assign(grid.dataset, { rows: nRows, cols: nCols });
  setAttribute(cells, "transform", `scale(${cell})`);
  const n = nRows * nCols;
  const large = n > VECTOR_MAX;
  const pixels = v.parts.pixels;
  pixels.hidden = !large;
  Object.assign(pixels, { width: large ? nCols : 0, height: large ? nRows : 0 });
  Object.assign(pixels.style, { left: x0 + "px", top: y0 + "px", width: gridW + "px", height: gridH + "px" });
  if (large) {
    // the rectangles stay for the next smaller matrix; its numbers go (they would stay drawn over the canvas)
    cells.setAttribute("display", "none");
    fitPool(numbers, v.texts, 0, () => svg("text"));
    return;
  }
  cells.removeAttribute("display");
  fitPool(cells, v.rects, n, () => svg("rect", { width: 1, height: 1 }));
  fitPool(numbers, v.texts, annotate ? n : 0, () => svg("text"));
  for (let k = 0; k < n; k++) {
    // the k-th element shows cell (i, j), row by row
    const i = Math.floor(k / nCols);
    const j = k % nCols;
    setAttribute(v.rects[k], "x", String(j));
    setAttribute(v.rects[k], "y", String(i));
    if (annotate) {
      setAttribute(v.texts[k], "x", String((j + 0.5) * cell));
      setAttribute(v.texts[k], "y", String((i + 0.5) * cell));
    }
  }
}

/** @type {WeakMap<Element[], Element[]>} the elements a pool took out of its layer, kept for when it grows again */
const spares = new WeakMap();

/** Exactly `n` elements in `pool` and in `layer` (which holds nothing else), in order: the ones there are kept, the
 * ones a smaller `n` takes out are kept aside, and a larger `n` puts those back before it creates any (a view that
 * goes back to a shape it showed makes no element, and finds them where they were).
 * @template {Element} E @param {Element} layer @param {E[]} pool @param {number} n @param {() => E} make */
function fitPool(layer, pool, n, make) {
  const spare = /** @type {E[]} */ (spares.get(pool) || []);
  spares.set(pool, spare);
  if (pool.length > n) {
    const out = pool.splice(n);
    // most go: the layer emptied at once and the few kept put back
    if (out.length > n) layer.replaceChildren(...pool);
    else for (const el of out) el.remove();
    spare.push(...out.reverse()); // the last taken out comes back first: each to where it was
  }
  if (pool.length === n) return;
  const added = document.createDocumentFragment();
  while (pool.length < n) added.appendChild(pool[pool.push(spare.pop() || make()) - 1]);
  layer.appendChild(added);
}

/** @typedef {{rgb: [number, number, number][], fill: string[], ink: string[]}} Palette */
/** @type {Map<string, Palette>} each palette's colours, made once: a cell's fill and a number's ink per entry */
const palettes = new Map();

/** The view's palette: each entry's rgb, its fill (`rgb(r,g,b)`) and the ink of a number on it (inkOn).
 * @param {Drawn} model @returns {Palette} */
function palette(model) {
  const hex = model.get("palette") || ["#000000", "#ffffff"];
  const key = hex.join();
  let got = palettes.get(key);
  if (!got) {
    const rgb = hex.map(hexToRgb);
    got = { rgb, fill: rgb.map(([r, g, b]) => `rgb(${r},${g},${b})`), ink: rgb.map(inkOn) };
    palettes.set(key, got);
  }
  return got;
}

// ---------------------------------------------------------------------------------------- paint
/** Every cell's colour and number (and its ink, readable on the cell). @param {View} v */
function paintCells(v) {
  const m = v.model;
  const lo = m.get("vmin");
  const hi = m.get("vmax");
  const pal = palette(m);
  const n = pal.rgb.length;
  const decimals = m.get("decimals");
  const fontSize = m.get("font_size") * 0.9;
  const cell = m.get("cell_size");
  const { nRows, nCols } = v.matrix;
  if (nRows * nCols > VECTOR_MAX) return paintPixels(v.parts.pixels, v.matrix, (x) => colourOf(x, lo, hi, pal.rgb));
  let k = 0;
  for (const row of v.matrix.rows) {
    for (const value of row) {
      const c = colourIndex(value, lo, hi, n);
      setAttribute(v.rects[k], "fill", pal.fill[c]);
      const text = v.texts[k];
      if (text) {
        const shown = formatValue(value, decimals);
        setText(text, shown);
        setAttribute(text, "font-size", String(fitted(shown, fontSize, cell)));
        setAttribute(text, "fill", pal.ink[c]);
      }
      k++;
    }
  }
}

/** A large matrix: one pixel per cell. @param {HTMLCanvasElement} canvas @param {Matrix} matrix
 * @param {(x: number) => [number, number, number]} colour */
function paintPixels(canvas, { rows, nRows, nCols }, colour) {
  const image = new ImageData(nCols, nRows);
  rows.forEach((row, i) => {
    row.forEach((x, j) => {
      image.data.set([...colour(x), 255], 4 * (i * nCols + j));
    });
  });
  /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d")).putImageData(image, 0, 0);
}

/** The font size at which `text` fits in a cell (wide numbers such as `-3.3e-17` get smaller).
 * @param {string} text @param {number} fontSize @param {number} cell */
function fitted(text, fontSize, cell) {
  const width = text.length * fontSize * 0.6;
  return width <= cell * 0.92 ? fontSize : Math.floor(((fontSize * cell * 0.92) / width) * 10) / 10;
}

/** Write only what changed: an unchanged text or attribute set again would still cost a layout.
 * @param {Element} node @param {string} name @param {string} value */
function setAttribute(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

/** @param {Node} node @param {string} text */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Replace the children of `layer` with `make()`'s, unless `key` says they are the ones shown.
 * @param {Element} layer @param {string} key @param {() => Element[]} make */
function replaceUnlessShown(layer, key, make) {
  if (layer.getAttribute("data-shows") === key) return;
  layer.setAttribute("data-shows", key);
  layer.replaceChildren(...make());
}

/** Whole rows, whole columns and single cells outlined inside their cells. @param {View} v @param {Geometry} g */
function paintHighlights(v, g) {
  const m = v.model;
  const lw = m.get("line_width");
  const { cell, gridW, gridH } = g;
  /** @type {[number, number, number, number][]} */
  const boxes = [
    ...(m.get("highlight_rows") || []).map(
      (i) => /** @type {[number, number, number, number]} */ ([0, i * cell, gridW, cell]),
    ),
    ...(m.get("highlight_cols") || []).map(
      (j) => /** @type {[number, number, number, number]} */ ([j * cell, 0, cell, gridH]),
    ),
    ...(m.get("highlight_cells") || []).map(
      ([i, j]) => /** @type {[number, number, number, number]} */ ([j * cell, i * cell, cell, cell]),
    ),
  ];
  const layer = v.parts.highlights;
  setAttribute(layer, "stroke", m.get("highlight_color"));
  setAttribute(layer, "stroke-width", String(lw));
  replaceUnlessShown(layer, JSON.stringify([lw, boxes]), () =>
    boxes.map(([x, y, w, h]) =>
      svg("rect", { x: x + lw / 2, y: y + lw / 2, width: Math.max(0, w - lw), height: Math.max(0, h - lw) }),
    ),
  );
}

/** The pointer's cell and the keyboard's cell, outlined. @param {View} v */
function paintOutline(v) {
  if (!v.geometry) return;
  const { cell } = v.geometry;
  /** @type {Cell[]} */
  const outlined = [];
  if (v.hover) outlined.push(v.hover);
  if (document.activeElement === v.parts.grid) outlined.push(v.focused);
  replaceUnlessShown(v.parts.outline, JSON.stringify([cell, outlined]), () =>
    outlined.map(([i, j]) => svg("rect", { x: j * cell + 1, y: i * cell + 1, width: cell - 2, height: cell - 2 })),
  );
}

/** The texts that change without moving anything. @param {View} v @param {Geometry} g */
function paintTexts(v, g) {
  const m = v.model;
  const title = m.get("title") || "";
  setText(g.title, title);
  setAttribute(v.parts.grid, "aria-label", title || "heatmap");
  setAttribute(v.parts.tableToggle, "aria-label", `table of ${title || "the heatmap"}`);
  setAttribute(v.parts.grid, "data-editable", String(Boolean(m.get("editable"))));
  const lo = m.get("vmin");
  const hi = m.get("vmax");
  [hi, (lo + hi) / 2, lo].forEach((value, k) => {
    setText(g.ticks[k], formatValue(value, 2));
  });
  const description = m.get("description") || "";
  if (v.parts.desc.textContent && v.parts.desc.textContent !== description && document.activeElement !== v.parts.grid)
    announceChange(v.parts.root, description);
  setText(v.parts.desc, description);
  setText(v.parts.message, m.get("message"));
  if (v.parts.message.hidden !== !m.get("message")) v.parts.message.hidden = !m.get("message");
}

/** @type {WeakMap<Element, {region: HTMLElement, said: string[]}>} each explorer's announcer */
const announcers = new WeakMap();

/** Say once, politely, what a change of state shows: the descriptions of every view it changed, together in the
 * explorer's one live region (made at its first change), not a message per view or per cell. A view whose grid
 * has the focus reads its own cell out instead (announce).
 * @param {HTMLElement} root @param {string} description */
function announceChange(root, description) {
  const host = root.closest(".attnlib-explorer") || root.parentElement || root;
  let announcer = announcers.get(host);
  if (!announcer) {
    const region = html("p", { class: "attn-heatmap-description attn-heatmap-change", "aria-live": "polite" });
    host.append(region);
    announcer = { region, said: [] };
    announcers.set(host, announcer);
  }
  const a = announcer;
  if (!a.said.length)
    queueMicrotask(() => {
      setText(a.region, a.said.join(" "));
      a.said = [];
    });
  a.said.push(description);
}

/** @param {View} v */
function draw(v) {
  v.matrix = readMatrix(v.model);
  const key = frameKey(v);
  if (!v.geometry || v.geometry.key !== key) buildFrame(v, key);
  const g = /** @type {Geometry} */ (v.geometry);
  paintTexts(v, g);
  paintCells(v);
  paintHighlights(v, g);
  paintOutline(v);
  if (!v.parts.tableBox.hidden) drawTable(v);
  if (v.tipped) showTooltip(v, v.tipped); // the number under the pointer changed
  if (document.activeElement === v.parts.grid) announce(v);
}

/** Every number as an HTML table (what a screen reader reads). @param {View} v */
function drawTable(v) {
  const m = v.model;
  const rows = m.get("row_labels") || [];
  const precision = m.get("precision");
  const table = html("table");
  table.append(html("caption", {}, m.get("title") || "matrix"));
  const head = html("tr");
  const corner = `${m.get("ylabel") || "row"} \\ ${m.get("xlabel") || "column"}`;
  head.append(
    html("th", { scope: "col" }, corner),
    ...(m.get("col_labels") || []).map((c) => html("th", { scope: "col" }, String(c))),
  );
  table.append(html("thead"));
  /** @type {HTMLElement} */ (table.tHead).append(head);
  const body = html("tbody");
  v.matrix.rows.forEach((row, i) => {
    const tr = html("tr");
    tr.append(
      html("th", { scope: "row" }, String(rows[i] ?? i + 1)),
      ...row.map((x) => html("td", {}, formatValue(x, precision))),
    );
    body.append(tr);
  });
  table.append(body);
  v.parts.tableBox.replaceChildren(table);
}

// ---------------------------------------------------------------------------------------- cells
/** The cell under a pointer event, or null. @param {View} v @param {MouseEvent} ev @returns {Cell | null} */
function cellAt(v, ev) {
  const g = v.geometry;
  if (!g || !g.nRows) return null;
  const box = v.parts.grid.getBoundingClientRect();
  const i = Math.floor(((ev.clientY - box.top) / box.height) * g.nRows);
  const j = Math.floor(((ev.clientX - box.left) / box.width) * g.nCols);
  return i >= 0 && i < g.nRows && j >= 0 && j < g.nCols ? [i, j] : null;
}

/** Where cell (i, j) is in the figure, from the geometry (no layout of the page). @param {View} v @param {Cell} c */
function cellBox(v, [i, j]) {
  const { x0, y0, cell } = /** @type {Geometry} */ (v.geometry);
  return { left: x0 + j * cell, top: y0 + i * cell, size: cell };
}

/** @param {View} v @param {Cell} c */
function labelOf(v, [i, j]) {
  return `${(v.model.get("row_labels") || [])[i] ?? i + 1}, ${(v.model.get("col_labels") || [])[j] ?? j + 1}`;
}

/** @param {View} v @param {Cell} c */
function inside(v, [i, j]) {
  return i < v.matrix.nRows && j < v.matrix.nCols;
}

/** Ask the explorer for cell c's explanation, then show it where that cell is shown (the latest answer only).
 * @param {View} v @param {Cell} c */
function explain(v, c) {
  if (!asks(v)) return;
  const asked = ++v.asked;
  const shows = (/** @type {Cell | null} */ d) => d !== null && d[0] === c[0] && d[1] === c[1];
  v.host
    .explain(c[0], c[1])
    .then((text) => {
      if (asked !== v.asked) return;
      if (shows(v.tipped)) tooltipText(v, c, String(text));
      if (document.activeElement === v.parts.grid && shows(v.focused)) announce(v, String(text));
    })
    .catch(() => {
      if (asked === v.asked && shows(v.tipped)) tooltipText(v, c, "");
    }); // no kernel: the value alone
}

/** Whether cells have explanations to ask for (none on a page with no kernel). @param {View} v */
function asks(v) {
  return Boolean(v.model.get("explained")) && v.host.asks();
}

/** @param {View} v @param {Cell} c @param {string | null} why  null: asked for */
function tooltipText(v, c, why) {
  const [i, j] = c;
  const tip = v.parts.tooltip;
  tip.replaceChildren(
    html("div", { class: "attn-tip-head" }, labelOf(v, c)),
    html("div", { class: "attn-tip-value" }, String(v.matrix.rows[i][j])),
  );
  if (why === null) tip.append(html("div", { class: "attn-tip-why attn-tip-pending" }, "…"));
  else if (why) tip.append(html("div", { class: "attn-tip-why" }, why));
}

/** @param {View} v @param {Cell} c */
function showTooltip(v, c) {
  if (!inside(v, c)) return hideTooltip(v);
  const tip = v.parts.tooltip;
  v.tipped = c;
  tooltipText(v, c, asks(v) ? null : "");
  const box = cellBox(v, c);
  const figure = v.parts.figure;
  const left = figure.offsetLeft - figure.scrollLeft + box.left + box.size + 6;
  Object.assign(tip.style, { left: left + "px", top: figure.offsetTop + box.top + "px" });
  tip.hidden = false;
  explain(v, c);
}

/** @param {View} v */
function hideTooltip(v) {
  v.parts.tooltip.hidden = true;
  v.tipped = null;
}

/** The keyboard's cell, read out: labels, value at full precision and its explanation. @param {View} v @param {string} [why] */
function announce(v, why = "") {
  if (!inside(v, v.focused)) return;
  const value = formatValue(v.matrix.rows[v.focused[0]][v.focused[1]], v.model.get("precision"));
  setText(v.parts.live, `${labelOf(v, v.focused)}: ${value}${why ? "; " + why : ""}`);
}

/** @param {View} v @param {number} i @param {number} j */
function focusCell(v, i, j) {
  const g = v.geometry;
  if (!g || !g.nRows) return;
  v.focused = [Math.max(0, Math.min(g.nRows - 1, i)), Math.max(0, Math.min(g.nCols - 1, j))];
  Object.assign(v.parts.grid.dataset, { row: v.focused[0], col: v.focused[1] });
  if (document.activeElement !== v.parts.grid) v.parts.grid.focus({ preventScroll: true });
  announce(v);
  showTooltip(v, v.focused);
  paintOutline(v);
}

/** An input over cell c; Enter sends the text to the kernel, which validates it. @param {View} v @param {Cell} c */
function startEdit(v, c) {
  if (!v.model.get("editable")) return;
  stopEdit(v);
  const box = cellBox(v, c);
  const editor = html("input", {
    type: "text",
    class: "attn-heatmap-editor",
    "aria-label": `new value for ${labelOf(v, c)}`,
  });
  editor.value = String(v.matrix.rows[c[0]][c[1]]);
  Object.assign(editor.style, {
    left: box.left + "px",
    top: box.top + "px",
    width: Math.max(box.size, 60) + "px",
    height: box.size + "px",
  });
  v.parts.figure.appendChild(editor);
  v.editor = editor;
  editor.focus();
  editor.select();
  editor.addEventListener("keydown", (ev) => {
    ev.stopPropagation();
    if (ev.key === "Enter") v.host.send({ kind: "edit", row: c[0], col: c[1], text: editor.value });
    if (ev.key === "Enter" || ev.key === "Escape") {
      focusCell(v, ...c); // back to the cell first, then away with the editor
      stopEdit(v);
    }
  });
  editor.addEventListener("blur", () => setTimeout(() => stopEdit(v), 0));
}

/** @param {View} v */
function stopEdit(v) {
  const editor = v.editor;
  v.editor = null;
  if (editor) editor.remove();
}

/** @param {View} v @param {Cell} c */
function choose(v, c) {
  v.host.send({ kind: "select", row: c[0], col: c[1] });
  startEdit(v, c);
}

/** @type {Record<string, Cell>} */
const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/** @param {View} v @param {KeyboardEvent} ev */
function onKey(v, ev) {
  const g = v.geometry;
  if (!g || !g.nRows) return;
  const [i, j] = v.focused;
  const ours = ev.key in MOVES || ["Home", "End", "Enter", " "].includes(ev.key);
  if (ours) {
    ev.preventDefault();
    ev.stopPropagation(); // JupyterLab must not move between notebook cells
  }
  if (ev.key in MOVES) focusCell(v, i + MOVES[ev.key][0], j + MOVES[ev.key][1]);
  else if (ev.key === "Home" || ev.key === "End") focusCell(v, i, ev.key === "Home" ? 0 : g.nCols - 1);
  else if (ev.key === "Enter" || ev.key === " ") choose(v, [i, j]);
  else if (ev.key === "Escape") hideTooltip(v);
}

/** @param {View} v */
function listen(v) {
  const { grid, tableToggle, tableBox } = v.parts;
  grid.addEventListener("mousemove", (ev) => {
    const c = cellAt(v, ev);
    if (String(c) === String(v.hover)) return;
    v.hover = c;
    if (c) showTooltip(v, c);
    else hideTooltip(v);
    paintOutline(v);
  });
  grid.addEventListener("mouseleave", () => {
    v.hover = null;
    hideTooltip(v);
    paintOutline(v);
  });
  grid.addEventListener("focus", () => focusCell(v, ...v.focused));
  grid.addEventListener("blur", () => {
    hideTooltip(v);
    paintOutline(v);
  });
  grid.addEventListener("click", (ev) => {
    const c = cellAt(v, ev);
    if (!c) return;
    focusCell(v, ...c);
    choose(v, c);
  });
  grid.addEventListener("keydown", (ev) => onKey(v, ev));
  tableToggle.addEventListener("click", () => {
    tableBox.hidden = !tableBox.hidden;
    tableToggle.setAttribute("aria-pressed", String(!tableBox.hidden));
    if (!tableBox.hidden) drawTable(v);
  });
}

/** A heatmap in `el`: `draw(state)` shows a state (the view's fixed look and what a change moves, together).
 * @param {HTMLElement} el @param {Host} host */
export function createHeatmap(el, host) {
  const v = createView(el, host);
  listen(v);
  return {
    root: v.parts.root,
    /** @param {Partial<Model>} state */
    draw(state) {
      for (const key of Object.keys(v.state)) delete (/** @type {any} */ (v.state)[key]);
      Object.assign(v.state, state);
      draw(v);
    },
  };
}
