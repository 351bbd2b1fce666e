// Unit tests of the pure parts of an explorer's front end (node --test; make lint): the key its values are
// compared by, the rule that drops a stale kernel reply, the visibility rules, a slider's steps, which controls a
// page with no kernel disables, and the page's state through changes, chunks that arrive or cannot be had, and
// kernel answers (against a table of a few states whose chunks a test adds).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  answered,
  arrived,
  failed,
  isCurrent,
  moved,
  pageState,
  stepsOf,
  uncovered,
  valuesKey,
  visible,
} from "../../attnlib/show/static/explorer.js";

test("the key of values does not depend on the order of their names", () => {
  assert.equal(valuesKey({ a: 1, b: "x" }), valuesKey({ b: "x", a: 1 }));
  assert.notEqual(valuesKey({ a: 1 }), valuesKey({ a: "1" }));
  assert.notEqual(valuesKey({ a: 1, b: 2 }), valuesKey({ a: 1 }));
});

test("a reply to the page applies only while the page still shows the values it answers", () => {
  const asked = { example: "001", scores: "1 2; 3 4", query: 0 };
  const reply = { origin: "page", values: asked };
  assert.equal(isCurrent(reply, { ...asked }), true);
  assert.equal(isCurrent(reply, { ...asked, query: 1 }), false); // the learner moved on: stale, dropped
  // the kernel's reset moved the values: the reply is for what the page asked
  const reset = { origin: "page", values: { ...asked, scores: "0" }, asked };
  assert.equal(isCurrent(reset, asked), true);
  assert.equal(isCurrent(reset, { ...asked, scores: "5" }), false);
});

test("a change made in Python always applies", () => {
  assert.equal(isCurrent({ origin: "python", values: { a: 2 } }, { a: 1 }), true);
});

test("visible_if and hidden_if follow the controls' values", () => {
  const grid = { kind: "grid", visible_if: { head: ["all"] } };
  const one = { kind: "view", hidden_if: { head: ["all"] } };
  assert.equal(visible(grid, { head: "all" }), true);
  assert.equal(visible(grid, { head: 0 }), false);
  assert.equal(visible(one, { head: 0 }), true);
  assert.equal(visible(one, { head: "all" }), false);
  assert.equal(visible({ kind: "hbox" }, {}), true);
});

test("sliders move through Python's numbers; an integer slider through its own", () => {
  assert.deepEqual(stepsOf({ kind: "log-slider", steps: [0.1, 1, 10] }), [0.1, 1, 10]);
  assert.deepEqual(stepsOf({ kind: "selection-slider", options: [0, 50, 100] }), [0, 50, 100]);
  assert.deepEqual(stepsOf({ kind: "selection-slider", options: [["a", 1]] }), [1]);
  assert.equal(stepsOf({ kind: "int-slider", min: 0, max: 3 }), null);
});

test("with no kernel, the controls the table does not enumerate are the ones disabled", () => {
  const tree = {
    kind: "vbox",
    children: [
      { kind: "dropdown", name: "example" },
      { kind: "textarea", name: "scores" },
      { kind: "html", name: "stats" },
      { kind: "view", name: "heatmap" },
    ],
  };
  assert.deepEqual(uncovered(tree, { controls: ["example"] }), ["scores"]);
  assert.deepEqual(uncovered(tree, null), ["example", "scores"]);
});

/** A table of the states n = 0 … 5 in two chunks (n < 3, n ≥ 3), the first held; a typed `note` is free and the
 * table holds only note "" (a typed note goes to the kernel). Changing `n` resets `note` (a transition). */
function fakeRule() {
  const held = new Set([0]);
  const chunkOf = (/** @type {number} */ n) => ({ part: 0, index: n < 3 ? 0 : 1 });
  return {
    held,
    /** @type {import("../../attnlib/show/static/explorer.js").Rule} */
    rule: {
      change: (values, free, name, value) => {
        const next = { ...values, [name]: value, ...(name === "n" && { note: "" }) };
        const n = Number(next.n);
        const state = next.note === "" && held.has(chunkOf(n).index) ? { texts: { out: `n = ${n}` } } : null;
        return { values: next, free, state };
      },
      missing: (values) => (held.has(chunkOf(Number(values.n)).index) ? [] : [chunkOf(Number(values.n))]),
    },
  };
}

test("a change the table holds is drawn at once and awaits nothing", () => {
  const { rule } = fakeRule();
  const step = moved(pageState({ n: 0, note: "" }, {}), rule, "n", 2);
  assert.deepEqual(step.draw, { texts: { out: "n = 2" } });
  assert.deepEqual(step.page, { values: { n: 2, note: "" }, free: {}, awaited: null });
  assert.deepEqual(step.fetch, []);
});

test("a change the table lacks awaits its chunk, then is drawn from the table once it arrives", () => {
  const { rule, held } = fakeRule();
  const step = moved(pageState({ n: 0, note: "" }, {}), rule, "n", 4);
  assert.equal(step.draw, null);
  assert.deepEqual(step.fetch, [{ part: 0, index: 1 }]);
  assert.deepEqual(step.page.awaited?.chunks, ["0/1"]);
  assert.deepEqual(step.page.awaited?.before.values, { n: 0, note: "" });
  assert.equal(arrived(step.page, rule, { part: 0, index: 7 }).draw, null); // another chunk: still waiting
  held.add(1);
  const done = arrived(step.page, rule, { part: 0, index: 1 });
  assert.deepEqual(done.draw, { texts: { out: "n = 4" } });
  assert.deepEqual(done.page, { values: { n: 4, note: "" }, free: {}, awaited: null });
  assert.equal(done.send, false); // the values are those the page already sent
});

test("a newer change drops the awaited one: its chunk arriving draws nothing", () => {
  const { rule, held } = fakeRule();
  const waiting = moved(pageState({ n: 0, note: "" }, {}), rule, "n", 4).page;
  const newer = moved(waiting, rule, "n", 1);
  assert.equal(newer.page.awaited, null);
  held.add(1);
  const late = arrived(newer.page, rule, { part: 0, index: 1 });
  assert.equal(late.draw, null);
  assert.deepEqual(late.page.values, { n: 1, note: "" });
});

test("a chunk no source has undoes the change that awaited it; an older change's failure is ignored", () => {
  const { rule } = fakeRule();
  const waiting = moved(pageState({ n: 1, note: "" }, {}), rule, "n", 5).page;
  const { page, undone } = failed(waiting, { part: 0, index: 1 });
  assert.deepEqual(undone, { n: 5, note: "" });
  assert.deepEqual(page, { values: { n: 1, note: "" }, free: {}, awaited: null });
  assert.deepEqual(failed(page, { part: 0, index: 1 }), { page, undone: null });
});

test("a typed value the table lacks is the kernel's: nothing to fetch, its answer applies while current", () => {
  const { rule } = fakeRule();
  const step = moved(pageState({ n: 0, note: "" }, {}), rule, "note", "hello");
  assert.equal(step.draw, null);
  assert.deepEqual(step.fetch, []);
  const shown = { origin: "page", values: { n: 0, note: "hello" }, free: { cell: 2 } };
  assert.deepEqual(answered(step.page, shown), { values: shown.values, free: { cell: 2 }, awaited: null });
  const later = moved(step.page, rule, "n", 1).page; // the learner moved on before the answer came
  assert.equal(answered(later, shown), null);
});
