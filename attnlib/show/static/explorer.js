// @ts-check
// An explorer's front end (attnlib/show/page.py, ExplorerWidget): ONE model per explorer; this draws all of it —
// its layout (`tree`), its controls as native inputs, its heatmaps (heatmap.js), its texts and its message.
// A change in the page: the new values are the table's transition; when the table has that state the page draws
// it in the same task and then sends `values` (the kernel adopts them and sends nothing back); when it does not
// (typed text, a typed cell), the page sends `values` and the kernel answers with `shown`, which the page applies
// only while it is still current (isCurrent). With no kernel (`kernel` false), the controls the table does not
// cover are disabled, with a note.
// The DOM the tests and benchmarks rely on: the root `.attnlib-explorer[data-explorer=<class name>]`, each
// control's input `[data-control=<name>]` (a <select> for a menu, an <input type=range> for a slider whose
// value is an index into Python's steps for float, log and selection sliders, a radiogroup of buttons for
// toggle buttons, an <input type=checkbox> for a check box or a toggle, <input>/<textarea> for typed text,
// committed on change or Enter), each view's root `[data-view=<name>]`, each text `[data-text=<name>]`, the
// message `[role=status]`, the no-kernel note `[data-note=no-kernel]`. After drawing any state the root
// increments `data-shown` and dispatches "attnlib:shown" ({source: "table" | "kernel" | "initial", values}).
// Once what the page fetches after drawing is here (a small table's other chunks, with no kernel the views'
// hover texts, the chunks one step from the first state), the root's `data-fetched` is "true". After each state
// drawn, the page fetches the chunks one step from it (table.js neighbours), so that stepping a slider or a menu
// is drawn from the table in the input's task.
import { createHeatmap } from "./heatmap.js";
import {
  addChunkMessage,
  decodeTable,
  explanation,
  loadChunk,
  loadExplanations,
  lookup,
  missing,
  neighbours,
  prefetched,
  transition,
} from "./table.js";

/** @typedef {Record<string, unknown>} Values */
/** @typedef {{kind: string, name?: string, label?: string, value?: unknown, options?: unknown[], min?: number,
 *   max?: number, step?: number, steps?: unknown[], format?: string, disabled?: boolean, continuous?: boolean,
 *   placeholder?: string, tooltip?: string, look?: Record<string, unknown>, children?: Node[],
 *   css?: Record<string, string>, visible_if?: Record<string, unknown[]>, hidden_if?: Record<string, unknown[]>}} Node */
/** @typedef {{values?: Values, asked?: Values, origin?: string, views?: Record<string, Record<string, unknown>>,
 *   texts?: Record<string, unknown>, controls?: Record<string, unknown>, message?: string,
 *   free?: Values}} Shown */
/** @typedef {import("./table.js").Payload} Payload */
/** @typedef {{tree: Node, values: Values, shown: Shown, table: Payload | Record<string, never>, kernel: boolean,
 *   explorer: string}} Model */
/** @typedef {import("@anywidget/types").AnyModel<Model>} AnyModel */
/** @typedef {{node: Node, el: HTMLElement, input: HTMLElement, set: (traits: Record<string, unknown>) => void,
 *   disable: (why: boolean) => void}} Control */

export const ANSWER_MS = 2000;
export const BINDER = "https://mybinder.org/v2/gh/self-attention-step-by-step/self-attention-step-by-step/HEAD";

// ------------------------------------------------------------------------------------------- pure parts
/** The values as one text (the key the stale-reply rule compares). @param {Values} values */
export function valuesKey(values) {
  return JSON.stringify(
    Object.keys(values || {})
      .sort()
      .map((name) => [name, values[name]]),
  );
}

/** Whether a state the kernel sent applies to a page whose values are `current`: a change made in Python always
 * does; an answer to the page only while the page still shows the values it answers (else it is stale).
 * @param {Shown} shown @param {Values} current */
export function isCurrent(shown, current) {
  if (shown.origin !== "page") return true;
  const now = valuesKey(current);
  return valuesKey(shown.values || {}) === now || (shown.asked !== undefined && valuesKey(shown.asked) === now);
}

/** Whether node `node` shows while the controls have `values` (its visible_if / hidden_if rules).
 * @param {Node} node @param {Values} values */
export function visible(node, values) {
  const has = (/** @type {Record<string, unknown[]>} */ rule) =>
    Object.entries(rule).every(([name, allowed]) =>
      allowed.some((v) => JSON.stringify(v) === JSON.stringify(values[name])),
    );
  if (node.visible_if && !has(node.visible_if)) return false;
  if (node.hidden_if && has(node.hidden_if)) return false;
  return true;
}

/** The values a slider moves through (its index k ↔ value), or null for an integer slider (its own numbers).
 * @param {Node} node @returns {unknown[] | null} */
export function stepsOf(node) {
  if (node.kind === "selection-slider") return (node.options || []).map((o) => (Array.isArray(o) ? o[1] : o));
  if (node.steps) return node.steps;
  return null;
}

/** The enumerable controls of `tree` a page with no kernel can still move (those the table has).
 * @param {Node} tree @param {{controls: string[]} | null} table @returns {string[]} */
export function uncovered(tree, table) {
  /** @type {string[]} */
  const out = [];
  const walk = (/** @type {Node} */ node) => {
    if (node.children) node.children.forEach(walk);
    else if (node.name && CONTROL_KINDS.includes(node.kind) && !(table && table.controls.includes(node.name)))
      out.push(node.name);
  };
  walk(tree);
  return out;
}

/** A control moved in the page: the values and the free (typed, not a control) state after the table's
 * transition — a reset moves both: lesson 07's example sets new inputs — and the state the table has for them
 * (null: not in the table, or its chunk is not loaded).
 * @param {import("./table.js").Table | null} table @param {Values} current the controls' values
 * @param {Values} free @param {string} name @param {unknown} value
 * @returns {{values: Values, free: Values, state: Shown | null}} */
export function pageChange(table, current, free, name, value) {
  const asked = { ...current, [name]: value };
  if (!table) return { values: asked, free, state: null };
  const moved = transition(table, { ...asked, ...free }, name);
  /** @type {Values} */
  const values = {};
  /** @type {Values} */
  const after = { ...free };
  for (const [n, v] of Object.entries(moved)) {
    if (n in current) values[n] = v;
    else after[n] = v;
  }
  return { values, free: after, state: lookup(table, { ...values, ...after }) };
}

const CONTROL_KINDS = [
  "dropdown",
  "toggle-buttons",
  "selection-slider",
  "int-slider",
  "float-slider",
  "log-slider",
  "checkbox",
  "toggle",
  "text",
  "textarea",
  "int-text",
  "float-text",
];

const TYPED = ["text", "textarea", "int-text", "float-text"];

// ------------------------------------------------------------------------------------------- elements
let counter = 0;
/** @template {keyof HTMLElementTagNameMap} K @param {K} tag @param {Record<string, string>} [attributes] */
function element(tag, attributes = {}) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  return node;
}

/** @param {unknown} option @returns {[string, unknown]} */
function pair(option) {
  return Array.isArray(option) ? [String(option[0]), option[1]] : [String(option), option];
}

/** @param {unknown} value @param {string | undefined} format */
function readout(value, format) {
  if (typeof value !== "number") return String(value);
  const digits = format && /\.(\d+)f/.exec(format);
  return digits ? value.toFixed(Number(digits[1])) : String(value);
}

/** The note of a page with no kernel: `text`, then a link to Binder. @param {string} text */
function noKernelNote(text) {
  const note = element("p", { class: "attn-note", "data-note": "no-kernel" });
  const link = element("a", { href: BINDER, target: "_blank", rel: "noopener" });
  link.textContent = "launch the lessons on Binder";
  note.append(text, link, ".");
  return note;
}

/** One control: a label and a native input that calls `changed(value)`.
 * @param {Node} node @param {(value: unknown) => void} changed @returns {Control} */
function makeControl(node, changed) {
  const id = `attn-control-${++counter}`;
  const el = element("div", { class: `attn-control attn-control-${node.kind}` });
  const label = element("label", { for: id });
  label.textContent = node.label || "";
  if (node.tooltip) el.title = node.tooltip;
  const name = String(node.name);
  /** @type {Record<string, unknown>} */
  const traits = { ...node };
  /** @type {HTMLElement} */
  let input;
  /** @type {(traits: Record<string, unknown>) => void} */
  let set;
  if (node.kind === "dropdown") {
    const select = element("select", { id, "data-control": name });
    set = (t) => {
      if (t.options) {
        traits.options = t.options;
        select.replaceChildren(
          .../** @type {unknown[]} */ (t.options).map((o, k) => {
            const option = element("option", { value: String(k) });
            option.textContent = pair(o)[0];
            return option;
          }),
        );
      }
      const values = /** @type {unknown[]} */ (traits.options).map((o) => JSON.stringify(pair(o)[1]));
      if ("value" in t) select.value = String(values.indexOf(JSON.stringify(t.value)));
    };
    select.addEventListener("change", () => {
      changed(pair(/** @type {unknown[]} */ (traits.options)[Number(select.value)])[1]);
    });
    input = select;
  } else if (node.kind === "toggle-buttons") {
    const group = element("div", { role: "radiogroup", id, "data-control": name, "aria-label": node.label || name });
    set = (t) => {
      if (t.options) {
        traits.options = t.options;
        group.replaceChildren(
          .../** @type {unknown[]} */ (t.options).map((o) => {
            const [text, value] = pair(o);
            const button = element("button", { type: "button", role: "radio", "data-value": JSON.stringify(value) });
            button.textContent = text;
            button.addEventListener("click", () => changed(value));
            return button;
          }),
        );
      }
      if ("value" in t)
        for (const button of group.querySelectorAll("button"))
          button.setAttribute("aria-checked", String(button.dataset.value === JSON.stringify(t.value)));
    };
    input = group;
  } else if (["int-slider", "float-slider", "log-slider", "selection-slider"].includes(node.kind)) {
    const range = element("input", { type: "range", id, "data-control": name });
    const shown = element("output", { for: id });
    set = (t) => {
      Object.assign(traits, t);
      const steps = node.kind === "selection-slider" ? stepsOf(/** @type {Node} */ (traits)) : stepsOf(node);
      if (steps) {
        range.min = "0";
        range.max = String(steps.length - 1);
        range.step = "1";
        const k = steps.findIndex((s) => JSON.stringify(s) === JSON.stringify(traits.value));
        range.value = String(k < 0 ? 0 : k);
      } else {
        range.min = String(traits.min);
        range.max = String(traits.max);
        range.step = String(traits.step);
        range.value = String(traits.value);
      }
      shown.textContent = readout(traits.value, node.format);
    };
    const read = () => {
      const steps = node.kind === "selection-slider" ? stepsOf(/** @type {Node} */ (traits)) : stepsOf(node);
      return steps ? steps[Number(range.value)] : Number(range.value);
    };
    range.addEventListener(node.continuous === false ? "change" : "input", () => {
      shown.textContent = readout(read(), node.format);
      changed(read());
    });
    input = range;
    el.append(label, range, shown);
  } else if (node.kind === "checkbox" || node.kind === "toggle") {
    const box = element("input", { type: "checkbox", id, "data-control": name });
    set = (t) => {
      if ("value" in t) box.checked = Boolean(t.value);
    };
    box.addEventListener("change", () => changed(box.checked));
    input = box;
    el.append(box, label);
  } else {
    const typed =
      node.kind === "textarea"
        ? element("textarea", { id, "data-control": name, rows: "3" })
        : element("input", {
            id,
            "data-control": name,
            type: node.kind === "int-text" || node.kind === "float-text" ? "number" : "text",
          });
    if (node.placeholder) typed.setAttribute("placeholder", node.placeholder);
    if (node.kind === "int-text") typed.setAttribute("step", "1");
    if (node.kind === "float-text") typed.setAttribute("step", "any");
    set = (t) => {
      if ("value" in t && typed.value !== String(t.value)) typed.value = String(t.value);
    };
    const commit = () => {
      const text = typed.value;
      if (node.kind === "int-text" || node.kind === "float-text") {
        const number = Number(text);
        if (text.trim() === "" || !Number.isFinite(number) || (node.kind === "int-text" && !Number.isInteger(number)))
          return;
        changed(number);
      } else changed(text);
    };
    typed.addEventListener("change", commit);
    typed.addEventListener("keydown", (/** @type {Event} */ event) => {
      const ev = /** @type {KeyboardEvent} */ (event);
      ev.stopPropagation(); // JupyterLab's shortcuts must not take the keys typed here
      if (ev.key === "Enter" && node.kind !== "textarea") commit();
    });
    input = typed;
  }
  if (!el.contains(input)) el.append(label, input);
  const disable = (/** @type {boolean} */ off) => {
    const targets = input.matches("[role=radiogroup]") ? [...input.querySelectorAll("button")] : [input];
    for (const target of targets) /** @type {HTMLInputElement} */ (target).disabled = off;
  };
  set(node);
  disable(Boolean(node.disabled));
  return {
    node,
    el,
    input,
    set: (t) => {
      set(t);
      if ("disabled" in t) disable(Boolean(t.disabled));
    },
    disable,
  };
}

// ------------------------------------------------------------------------------------------- render
/** @type {import("@anywidget/types").Render<Model>} */
function render({ model, el }) {
  const tree = model.get("tree");
  const payload = model.get("table");
  const table = payload && "format" in payload ? decodeTable(/** @type {Payload} */ (payload)) : null;
  const kernel = Boolean(model.get("kernel"));
  const root = element("div", {
    class: "attnlib-explorer",
    "data-explorer": model.get("explorer") || "",
    "data-shown": "0",
    "data-lm-suppress-shortcuts": "true",
  });
  // with no kernel, the controls the table does not cover stay disabled, whatever a state's traits say
  const off = kernel ? [] : uncovered(tree, table);
  /** @type {Values} */
  let current = { ...(model.get("values") || {}) };
  // the typed state that is not a control (a typed cell), as the table compares it: the kernel says what it is
  /** @type {Values} */
  let free = { ...(model.get("shown")?.free || {}) };
  /** @type {Map<string, Control>} */
  const controls = new Map();
  /** @type {Map<string, {draw: (state: Record<string, unknown>) => void, look: Record<string, unknown>}>} */
  const views = new Map();
  /** @type {Map<string, HTMLElement>} */
  const texts = new Map();
  /** @type {[Node, HTMLElement][]} */
  const ruled = [];
  /** @type {HTMLElement | null} */
  let message = null;
  let asked = 0;
  /** @type {Map<number, (text: string) => void>} */
  const waiting = new Map();
  /** @param {string} view */
  const hostOf = (view) => ({
    send: (/** @type {Record<string, unknown>} */ msg) => model.send({ ...msg, view }),
    asks: () => kernel || Boolean(table?.explanations[view]),
    explain: (/** @type {number} */ row, /** @type {number} */ col) =>
      kernel ? askKernel(view, row, col) : fromTexts(view, row, col),
  });

  /** With no kernel: a cell's explanation in the state drawn, from the view's texts beside the page (loaded once
   * drawn; a hover before that waits for the file, never for a kernel).
   * @param {string} view @param {number} row @param {number} col @returns {Promise<string>} */
  const fromTexts = (view, row, col) => {
    if (!table) return Promise.resolve("");
    const values = { ...current, ...free };
    const said = explanation(table, view, values, row, col);
    if (said !== null) return Promise.resolve(said);
    return loadExplanations(table, view).then(() => explanation(table, view, values, row, col) ?? "");
  };

  /** A cell's explanation from the kernel ("" when no answer comes within ANSWER_MS).
   * @param {string} view @param {number} row @param {number} col @returns {Promise<string>} */
  const askKernel = (view, row, col) =>
    new Promise((resolve) => {
      const id = ++asked;
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve("");
      }, ANSWER_MS);
      waiting.set(id, (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      model.send({ kind: "explain", view, row, col, id });
    });

  /** @param {Node} node @returns {HTMLElement} */
  const build = (node) => {
    /** @type {HTMLElement} */
    let out;
    if (node.children) {
      out = element("div", { class: `attn-box attn-${node.kind}` });
      out.append(...node.children.map(build));
    } else if (node.kind === "view") {
      out = element("div", { class: "attn-view", "data-view": String(node.name) });
      const heatmap = createHeatmap(out, hostOf(String(node.name)));
      views.set(String(node.name), { draw: heatmap.draw, look: node.look || {} });
    } else if (node.kind === "message") {
      out = element("div", { class: "attn-message", role: "status", "aria-live": "polite" });
      message = out;
    } else if (node.kind === "html") {
      out = element("div", { class: "attn-text" });
      if (node.name) {
        out.dataset.text = node.name;
        texts.set(node.name, out);
      } else out.innerHTML = String(node.value ?? "");
    } else if (node.name && CONTROL_KINDS.includes(node.kind)) {
      const name = node.name;
      const control = makeControl(node, (value) => changed(name, value));
      controls.set(name, control);
      out = control.el;
    } else out = element("div");
    // a typed control's size is its input's; any other part's, its own
    const styled = node.name && TYPED.includes(node.kind) ? controls.get(node.name)?.input || out : out;
    if (node.css) for (const [k, v] of Object.entries(node.css)) styled.style.setProperty(k, v);
    if (node.visible_if || node.hidden_if) ruled.push([node, out]);
    return out;
  };

  /** Every output set to `state`, the controls to `values`; then the event. @param {Shown} state
   * @param {Values} values @param {"table" | "kernel" | "initial"} source */
  const apply = (state, values, source) => {
    for (const [name, traits] of Object.entries(state.controls || {}))
      controls
        .get(name)
        ?.set({ .../** @type {Record<string, unknown>} */ (traits), ...(off.includes(name) && { disabled: true }) });
    for (const [name, value] of Object.entries(values)) controls.get(name)?.set({ value });
    for (const [name, drawn] of Object.entries(state.views || {})) {
      const view = views.get(name);
      view?.draw({ ...view.look, ...drawn });
    }
    for (const [name, text] of Object.entries(state.texts || {})) {
      const node = texts.get(name);
      if (node && node.innerHTML !== String(text)) node.innerHTML = String(text);
    }
    const said = state.message ?? "";
    if (message && message.innerHTML !== said) message.innerHTML = said;
    for (const [node, out] of ruled) out.hidden = !visible(node, values);
    announce(source, values);
    if (source !== "initial") fetchAround();
  };

  const idle = globalThis.requestIdleCallback ?? ((/** @type {() => void} */ f) => setTimeout(f, 0));

  /** @type {Set<string>} the chunks asked of the kernel ("part/index"), not arrived yet: each asked once */
  const requested = new Set();
  /** Ask the kernel for the chunks it has not been asked for yet. @param {{part: number, index: number}[]} chunks */
  const askChunks = (chunks) => {
    for (const { part, index } of chunks) {
      if (requested.has(`${part}/${index}`)) continue;
      requested.add(`${part}/${index}`);
      model.send({ kind: "chunk", part, index });
    }
  };

  let aroundQueued = false;
  /** Once idle after a state is drawn: the chunks one step from the values shown (table.js neighbours), asked of
   * the kernel or loaded from their files, so that the next step of a slider or a menu finds its chunk here. */
  const fetchAround = () => {
    if (!table || aroundQueued) return;
    aroundQueued = true;
    idle(() => {
      aroundQueued = false;
      const near = neighbours(table, { ...current, ...free });
      if (kernel) askChunks(near);
      else for (const { part, index } of near) loadChunk(table, part, index);
    });
  };

  /** @type {(() => void)[]} the events of states drawn before the root was in the document */
  const pending = [];
  /** The event of a drawn state (and `data-shown`), once the root is in the document: a listener on the document
   * sees every one, the initial one included, in order.
   * @param {"table" | "kernel" | "initial"} source @param {Values} values */
  const announce = (source, values) => {
    const fire = () => {
      root.dataset.shown = String(Number(root.dataset.shown) + 1);
      root.dispatchEvent(
        new CustomEvent("attnlib:shown", { bubbles: true, detail: { source, values: { ...values } } }),
      );
    };
    if (root.isConnected && !pending.length) return fire();
    pending.push(fire);
    if (pending.length > 1) return;
    const flush = () => {
      for (const f of pending.splice(0)) f();
    };
    queueMicrotask(() => {
      if (root.isConnected) return flush();
      const watch = new MutationObserver(() => {
        if (!root.isConnected) return;
        watch.disconnect();
        flush();
      });
      watch.observe(document, { childList: true, subtree: true });
    });
  };

  /** @type {HTMLElement | null} the no-kernel note of a change whose chunk of the table this page lacks */
  let chunkNote = null;

  /** @type {{name: string, asked: Set<string>} | null} the change waiting for chunks of the table */
  let waitingFor = null;

  /** A control moved in the page. @param {string} name @param {unknown} value */
  const changed = (name, value) => {
    const { values: next, free: after, state } = pageChange(table, current, free, name, value);
    const [drawn, drawnFree] = [current, free];
    current = next;
    free = after;
    waitingFor = null;
    if (state) apply(state, next, "table");
    else for (const [n, v] of Object.entries(next)) controls.get(n)?.set({ value: v });
    if (!kernel) {
      chunkNote?.remove();
      chunkNote = null;
      const need = !state && table ? missing(table, { ...next, ...free }) : [];
      if (need.length) fromFiles(name, need, next, [drawn, drawnFree]);
      return;
    }
    if (!state && table) {
      // a chunk of the table not here yet: ask for it (the kernel, whose tables cover the state, stays quiet)
      const need = missing(table, { ...next, ...free });
      if (need.length) waitingFor = { name, asked: new Set(need.map(({ part, index }) => `${part}/${index}`)) };
      askChunks(need);
    }
    model.set("values", next);
    model.save_changes();
  };

  /** With no kernel: the chunks a change needs, loaded from the files beside the page (table.js loadChunk), then
   * the change drawn as a kernel's chunk would draw it. A chunk the page has no file of (saved or copied without
   * it): say so (no kernel will send it), until a state is drawn again; the controls go back to the state drawn,
   * so that the others still move it.
   * @param {string} name @param {{part: number, index: number}[]} need @param {Values} next
   * @param {[Values, Values]} drawn the values and the free state drawn before the change */
  const fromFiles = (name, need, next, drawn) => {
    const wait = { name, asked: new Set(need.map(({ part, index }) => `${part}/${index}`)) };
    waitingFor = wait;
    Promise.all(need.map(({ part, index }) => (table ? loadChunk(table, part, index) : false))).then((loaded) => {
      if (waitingFor !== wait) return; // another change since: that one is the page's
      if (loaded.every(Boolean)) return drawWaiting();
      waitingFor = null;
      [current, free] = drawn;
      for (const [n, v] of Object.entries(current)) controls.get(n)?.set({ value: v });
      const names = [...new Set(need.map(({ part }) => table?.parts[part].chunk?.control))];
      chunkNote = noKernelNote(
        `The states of ${names.map((n) => `${n} = ${readout(next[String(n)], undefined)}`).join(", ")} were not saved with this page; a running kernel computes them: `,
      );
      root.append(chunkNote);
    });
  };

  /** The change that waited for chunks, drawn from the table once they are all here, if it is still the page's. */
  const drawWaiting = () => {
    if (!table || !waitingFor) return;
    const { name } = waitingFor;
    const { values: next, free: after, state } = pageChange(table, current, free, name, current[name]);
    waitingFor = null;
    if (!state) return;
    const moved = valuesKey(next) !== valuesKey(current);
    current = next;
    free = after;
    apply(state, next, "table");
    if (moved && kernel) {
      model.set("values", next);
      model.save_changes();
    }
  };

  /** @type {Set<string>} the chunks asked of the kernel once drawn (a table marked prefetch, else the first state's
   * neighbours), not arrived yet */
  const prefetching = new Set();

  /** Once drawn, what the page fetches: the chunks of a table marked prefetch, else those one step from the first
   * state (from the kernel, or their files beside a page with no kernel) and, with no kernel, every view's hover
   * texts. The root's `data-fetched` is "true" once all of it is here (at once when there is nothing to fetch). */
  const fetchRest = () => {
    const marked = table ? prefetched(table) : [];
    const chunks = table && !marked.length ? neighbours(table, { ...current, ...free }) : marked;
    if (table && kernel) {
      for (const { part, index } of chunks) prefetching.add(`${part}/${index}`);
      askChunks(chunks);
      if (!chunks.length) root.dataset.fetched = "true";
      return;
    }
    const loads = table
      ? [
          ...chunks.map(({ part, index }) => loadChunk(table, part, index)),
          ...Object.keys(table.explanations).map((view) => loadExplanations(table, view)),
        ]
      : [];
    Promise.all(loads).then(() => {
      root.dataset.fetched = "true";
    });
  };

  /** A chunk arrived from the kernel: the change that waited for it is drawn from the table.
   * @param {{type: string, part: number, index: number, payload: unknown}} content @param {DataView[]} buffers */
  const chunkArrived = (content, buffers) => {
    if (!table) return;
    addChunkMessage(table, content, buffers);
    requested.delete(`${content.part}/${content.index}`);
    if (prefetching.delete(`${content.part}/${content.index}`) && !prefetching.size) root.dataset.fetched = "true";
    if (!waitingFor) return;
    waitingFor.asked.delete(`${content.part}/${content.index}`);
    if (!waitingFor.asked.size) drawWaiting();
  };

  /** `shown` from the kernel: applied while current, else dropped. */
  const fromKernel = () => {
    const shown = model.get("shown");
    if (!shown) return;
    if (!isCurrent(shown, current)) return;
    free = { ...(shown.free || {}) };
    current = { ...shown.values };
    apply(shown, current, "kernel");
  };

  /** @param {unknown} content @param {DataView[]} buffers */
  const onMessage = (content, buffers) => {
    const msg = /** @type {Record<string, unknown>} */ (content);
    if (msg?.type === "table-chunk")
      return chunkArrived(/** @type {{type: string, part: number, index: number, payload: unknown}} */ (msg), buffers);
    if (msg?.kind !== "explained") return;
    waiting.get(Number(msg.id))?.(String(msg.text ?? ""));
    waiting.delete(Number(msg.id));
  };

  // keys typed into the controls are theirs: JupyterLab's notebook must not take an arrow key for a cell move
  root.addEventListener("keydown", (ev) => {
    if (ev.target instanceof Element && ev.target.closest("input, select, textarea, button")) ev.stopPropagation();
  });
  root.append(build(tree));
  if (!kernel) {
    for (const name of off) controls.get(name)?.disable(true);
    if (off.length) {
      const states = table ? `${table.nRows} states were computed in advance; ` : "";
      root.append(noKernelNote(`${states}${off.join(", ")} need${off.length === 1 ? "s" : ""} a running kernel: `));
    }
  }
  el.append(root);
  const initial = (table && lookup(table, { ...current, ...free })) || model.get("shown");
  apply(/** @type {Shown} */ (initial), current, "initial");
  idle(fetchRest);
  model.on("change:shown", fromKernel);
  model.on("msg:custom", onMessage);
  return () => {
    model.off("change:shown", fromKernel);
    model.off("msg:custom", onMessage);
  };
}

export default { render };
