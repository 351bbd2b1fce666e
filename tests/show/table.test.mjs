// The page's table reader (attnlib/show/static/table.js) against Python (node --test; make lint): for lessons
// 01, 05, 07, 11 and 15, lookup() of every row's values is Python's Table.state(row), and transition() of
// every change the table's build tried is what the explorer's own transition and clamping give; for lessons 08
// and 12 (tables in parts and chunks), lookup() is compute()'s state at every state of 08 and sampled states of
// 12, after loading the chunks missing() asks for, and transition() is the explorer's at sampled changes. Lesson
// 12's chunk files (what a page with no kernel loads beside it) give the chunks Python's, through loadChunk and a
// document whose <script> runs the file; lessons 05 and 07's explanation files give every row's hover texts.
// The payloads and Python's answers come from tests/show/table_fixtures.py: run here into a temporary folder,
// or read from $TABLE_FIXTURES when set.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { runInThisContext } from "node:vm";
import {
  addChunk,
  addChunkMessage,
  chunkFile,
  decodeTable,
  explanation,
  loadChunk,
  loadExplanations,
  lookup,
  missing,
  neighbours,
  transition,
} from "../../attnlib/show/static/table.js";

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

  /** The chunks `values` needs, from the fixture (as a page gets them from the kernel or a file). */
  const load = (values) => {
    const asked = missing(table, values);
    for (const { part, index } of asked) addChunk(table, part, index, fixture.chunks[part][index]);
    return asked.length;
  };

  test(`${file}: lookup of every row's values is Python's state of the row`, () => {
    assert.ok(fixture.rows.length >= 2 || file.startsWith("01_inputs"));
    let loaded = 0;
    fixture.rows.forEach(([values, expected], row) => {
      let state = lookup(table, values);
      if (fixture.chunks) {
        assert.equal(state === null, missing(table, values).length > 0, "null exactly when a chunk is missing");
        loaded += load(values);
        state = lookup(table, values);
      }
      assert.deepEqual(comparable(state), comparable(expected), `row ${row}`);
    });
    if (fixture.chunks) assert.ok(loaded > 0, "the payload held only the first state's chunks");
  });

  test(`${file}: transition of every change is the explorer's transition and clamping`, () => {
    assert.ok(fixture.transitions.length >= Math.min(100, fixture.rows.length - 1));
    for (const [values, name, expected] of fixture.transitions) {
      load(values);
      let moved = transition(table, values, name);
      if (load(moved)) moved = transition(table, values, name); // the chunk it moved into: look again
      assert.deepEqual(moved, expected, `${name} → ${JSON.stringify(values[name])}`);
      assert.notEqual(lookup(table, moved), null, "a change from a row lands on a row");
    }
  });

  test(`${file}: the table counts the states it answers`, () => {
    const expected = file.startsWith("12_") ? 1_097_712 : file.startsWith("08_") ? 210 : fixture.rows.length;
    assert.equal(table.nRows, expected);
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
  assert.deepEqual(comparable(lookup(table, nudged)), comparable(lookup(table, values)));
  assert.equal(lookup(table, { ...values, temperature: values.temperature * 1.001 }), null);
});

test("the chunks one step from a state are its chunked control's neighbours in the grid, not held yet", () => {
  for (const file of files.filter((f) => f.startsWith("08_") || f.startsWith("12_"))) {
    const fixture = revive(JSON.parse(readFileSync(join(folder, file), "utf8")));
    const table = decodeTable(fixture.payload);
    const p = table.parts.findIndex((part) => part.chunk);
    const { control, values: grid } = table.parts[p].chunk;
    const [values] = fixture.rows[0];
    const last = grid.length - 1;
    for (const at of [0, Math.floor(last / 2), last]) {
      const here = { ...values, [control]: grid[at] };
      const expected = [at - 1, at + 1].filter((j) => j >= 0 && j <= last && !table.parts[p].chunks.has(j));
      const near = neighbours(table, here);
      assert.deepEqual(
        near,
        expected.map((index) => ({ part: p, index })),
        `${file}: ${control} = ${grid[at]}`,
      );
      for (const { part, index } of near) addChunk(table, part, index, fixture.chunks[part][index]);
      assert.deepEqual(neighbours(table, here), [], `${file}: held now, not asked again`);
      // a step along the grid from here is then covered by the table (its other controls on a row's values)
      for (const j of expected) assert.equal(missing(table, { ...here, [control]: grid[j] }).length, 0);
    }
    assert.deepEqual(neighbours(table, { ...values, [control]: "off the grid" }), [], `${file}: a value off the grid`);
  }
});

test("a chunk sent in a kernel's message (content and buffers) is the chunk the table asks for", () => {
  for (const file of files.filter((f) => f.startsWith("08_") || f.startsWith("12_"))) {
    const fixture = revive(JSON.parse(readFileSync(join(folder, file), "utf8")));
    const { content, buffers } = fixture.message;
    const viaMessage = decodeTable(fixture.payload);
    const viaFile = decodeTable(fixture.payload);
    addChunkMessage(viaMessage, content, buffers);
    addChunk(viaFile, content.part, content.index, fixture.chunks[content.part][content.index]);
    const values = fixture.rows.map(([v]) => v).find((v) => missing(viaFile, v).length === 0 && lookup(viaFile, v));
    assert.ok(values, `${file}: a sampled state in that chunk`);
    assert.deepEqual(comparable(lookup(viaMessage, values)), comparable(lookup(viaFile, values)));
  }
});

/** A document whose <script> elements run the file their src names in `files` (a path relative to `base`), once
 * appended, as a browser runs a classic script from disk or over http; an absent file is the script's error. */
function documentOf(files, base) {
  const ran = [];
  return {
    ran,
    baseURI: base,
    createElement: () => ({}),
    head: {
      append(script) {
        const path = script.src.slice(new URL(".", base).href.length);
        ran.push(path);
        queueMicrotask(() => {
          if (!(path in files)) return script.onerror();
          runInThisContext(files[path]);
          script.onload();
        });
      },
    },
  };
}

test("a view's explanation file gives every row's hover texts, Python's (loadExplanations, explanation)", async () => {
  for (const file of ["05_softmax.json", "07_summing.json"]) {
    const fixture = revive(JSON.parse(readFileSync(join(folder, file), "utf8")));
    const table = decodeTable(fixture.payload);
    const names = Object.keys(table.explanations);
    assert.ok(names.length > 0, `${file}: no view names an explanation file`);
    const page = documentOf(fixture.files, `file:///site/notebooks/${file.replace(".json", ".html")}`);
    globalThis.document = /** @type {any} */ (page);
    try {
      const [values] = fixture.rows[0];
      assert.equal(explanation(table, names[0], values, 0, 0), null, "not loaded yet: no answer");
      for (const name of names) assert.equal(await loadExplanations(table, name), true, `${file} ${name}`);
      let said = 0;
      fixture.rows.forEach(([values], k) => {
        for (const name of names) {
          const expected = fixture.texts[k][name];
          for (let i = 0; i < Math.max(1, expected.length); i++)
            for (let j = 0; j < Math.max(1, expected[i]?.length ?? 0); j++) {
              const text = explanation(table, name, values, i, j);
              assert.equal(text, expected[i]?.[j] ?? "", `${file} row ${k} ${name} (${i}, ${j})`);
              said += text ? 1 : 0;
            }
        }
      });
      assert.ok(said > 0, `${file}: no cell with an explanation`);
      assert.equal(explanation(table, names[0], { ...values, [table.controls[0]]: "off the grid" }, 0, 0), null);
      const other = decodeTable({ ...fixture.payload, explanations: { [names[0]]: "attnlib-chunks/absent.js" } });
      assert.equal(await loadExplanations(other, names[0]), false, "a page copied without the file");
    } finally {
      delete globalThis.document;
    }
  }
});

test("a chunk file beside the page is the chunk Python has (loadChunk, as a page with no kernel loads it)", async () => {
  const fixture = revive(JSON.parse(readFileSync(join(folder, "12_positions.json"), "utf8")));
  const files = fixture.files;
  const table = decodeTable(fixture.payload);
  const fromPython = decodeTable(fixture.payload);
  const page = documentOf(files, "file:///site/notebooks/12_positions.html");
  globalThis.document = /** @type {any} */ (page);
  try {
    const held = [...table.parts[0].chunks.keys()];
    assert.deepEqual(
      held.map((i) => chunkFile(table, 0, i)),
      [""],
      "the page holds the first state's chunk",
    );
    const indices = table.parts[0].chunk.values.map((_, i) => i).filter((i) => chunkFile(table, 0, i) in files);
    assert.equal(indices.length, 3);
    for (const index of indices) {
      assert.equal(await loadChunk(table, 0, index), true, `chunk ${index}`);
      addChunk(fromPython, 0, index, fixture.chunks[0][index]);
    }
    assert.equal(await loadChunk(table, 0, indices[0]), true, "loaded once");
    assert.equal(page.ran.filter((p) => p === chunkFile(table, 0, indices[0])).length, 1, "its file ran once");
    const states = fixture.rows.map(([v]) => v).filter((v) => missing(fromPython, v).length === 0);
    assert.ok(states.length >= 3, "sampled states in the loaded chunks");
    for (const values of states)
      assert.deepEqual(comparable(lookup(table, values)), comparable(lookup(fromPython, values)));
    const absent = table.parts[0].chunk.values
      .map((_, i) => i)
      .find((i) => chunkFile(table, 0, i) && !indices.includes(i));
    assert.equal(await loadChunk(table, 0, absent), false, "a page copied without the file: not loaded");
    assert.equal(table.parts[0].chunks.has(absent), false);
  } finally {
    delete globalThis.document;
  }
});
