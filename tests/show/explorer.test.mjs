// Unit tests of the pure parts of an explorer's front end (node --test; make lint): the key its values are
// compared by, the rule that drops a stale kernel reply, the visibility rules, a slider's steps, and which
// controls a page with no kernel disables.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isCurrent, stepsOf, uncovered, valuesKey, visible } from "../../attnlib/show/static/explorer.js";

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
