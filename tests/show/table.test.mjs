// The page's table reader (attnlib/show/static/table.js) against Python (node --test; make lint): for lessons
// 01, 05, 07, 11 and 15, lookup() of every row's values is Python's Table.state(row), and transition() of
// every change the table's build tried is what the explorer's own transition and clamping give.
// The payloads and Python's answers come from tests/show/table_fixtures.py: run here into a temporary folder,
// or read from $TABLE_FIXTURES when set.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { decodeTable, find, lookup, transition, valuesOf } from "../../attnlib/show/static/table.js";

let folder = process.env.TABLE_FIXTURES;
if (!folder) {
  folder = mkdtempSync(join(tmpdir(), "attnlib-tables-"));
  const python = process.env.PYTHON ?? ".venv/bin/python";
  execFileSync(python, ["tests/show/table_fixtures.py", folder], { stdio: "inherit" });
  const made = folder;
  after(() => rmSync(made, { recursive: true, force: true }));
}

/** Bytes as anywidget delivers them: DataViews, here at an odd offset of a larger buffer. */
function revive(value) {
  if (Array.isArray(value)) return value.map(revive);
  if (value !== null && typeof value === "object") {
    if ("$bytes" in value) {
      const bytes = Buffer.from(value.$bytes, "base64");
      const padded = new Uint8Array(bytes.length + 3);
      padded.set(bytes, 3);
      return new DataView(padded.buffer, 3, bytes.length);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)]));
  }
  return value;
}

/** A state with each view's matrix as its bytes in hex (Python's expected state has them the same way). */
function comparable(state) {
  const views = Object.fromEntries(
    Object.entries(state.views).map(([name, view]) => {
      const buffer = view.buffer;
      const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      return [name, { ...view, buffer: Buffer.from(bytes).toString("hex") }];
    }),
  );
  return { ...state, views };
}

const files = readdirSync(folder).filter((f) => f.endsWith(".json"));

test("the fixtures hold lessons 05 and 11", () => {
  assert.ok(files.includes("05_softmax.json") && files.includes("11_multihead.json"), files.join(", "));
});

for (const file of files) {
  const fixture = revive(JSON.parse(readFileSync(join(folder, file), "utf8")));
  const table = decodeTable(fixture.payload);

  test(`${file}: lookup of every row's values is Python's state of the row`, () => {
    assert.ok(fixture.rows.length >= 2 || file.startsWith("01_inputs"));
    fixture.rows.forEach(([values, expected], row) => {
      assert.equal(find(table, values), row);
      assert.deepEqual(valuesOf(table, row), values);
      assert.deepEqual(comparable(lookup(table, values)), comparable(expected), `row ${row}`);
    });
  });

  test(`${file}: transition of every change is the explorer's transition and clamping`, () => {
    assert.ok(fixture.transitions.length >= fixture.rows.length - 1);
    for (const [values, name, expected] of fixture.transitions) {
      const moved = transition(table, values, name);
      assert.deepEqual(moved, expected, `${name} → ${JSON.stringify(values[name])}`);
      assert.notEqual(lookup(table, moved), null, "a change from a row lands on a row");
    }
  });

  test(`${file}: a free control typed over, or a value off the grid, is not covered`, () => {
    const [values] = fixture.rows[0];
    for (const name of table.free) assert.equal(lookup(table, { ...values, [name]: "typed by the learner" }), null);
    for (const name of table.controls) assert.equal(lookup(table, { ...values, [name]: "off the grid" }), null);
    assert.equal(lookup(table, {}), table.controls.length ? null : lookup(table, values));
  });
}

test("a number within the tolerance of a grid value is that value (a log slider's page-computed value)", () => {
  const file = join(folder, "05_softmax.json");
  const fixture = revive(JSON.parse(readFileSync(file, "utf8")));
  const table = decodeTable(fixture.payload);
  const [values] = fixture.rows[5];
  const nudged = { ...values, temperature: values.temperature * (1 + 1e-12) };
  assert.notEqual(nudged.temperature, values.temperature);
  assert.deepEqual(transition(table, nudged, "temperature"), values);
  assert.equal(find(table, nudged), 5);
  assert.equal(find(table, { ...values, temperature: values.temperature * 1.001 }), -1);
});
