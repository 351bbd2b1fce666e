// @ts-check
// An explorer's front end (attnlib/show/page.py, ExplorerWidget): ONE model per explorer; this draws all of it —
// its layout (`tree`), its controls as native inputs, its heatmaps (heatmap.js), its texts and its message.
// A change in the page, with a kernel and without: docs/architecture.md, "The life of a change"; the page's
// state and its two sources (the kernel, the files beside a static page) are below, render() joins them.
// The DOM the tests and benchmarks rely on: the root `.attnlib-explorer[data-explorer=<class name>]`, each
// control's input `[data-control=<name>]` (a <select> for a menu, an <input type=range> for a slider whose
// value is an index into Python's steps for float, log and selection sliders, a radiogroup of buttons for
// toggle buttons, an <input type=checkbox> for a check box or a toggle, <input>/<textarea> for typed text,
// committed on change or Enter), each view's root `[data-view=<name>]`, each text `[data-text=<name>]`, the
// message `[role=status]`, the no-kernel note `[data-note=no-kernel]`. After drawing any state the root
// increments `data-shown` and dispatches "attnlib:shown" ({source: "table" | "kernel" | "initial", values}).
// Once what the page fetches after drawing is here (fetchRest), the root's `data-fetched` is "true".
import { createHeatmap, html } from "./heatmap.js";
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

// ------------------------------------------------------------------------------------------- the page's state
// What the page holds, apart from the DOM: the values it shows (`values`: the controls', `free`: the typed state
// that is not a control, as the table compares it) and the change that waits for chunks of the table (`awaited`:
// its control, the chunks still missing, the values before it). Each step below is pure: it takes the page's
// state and returns the next one with what to do (a state to draw, chunks to fetch, values to send).

/** @typedef {{part: number, index: number}} Chunk */
/** @typedef {{name: string, chunks: string[], before: {values: Values, free: Values}}} Awaited */
/** @typedef {{values: Values, free: Values, awaited: Awaited | null}} PageState */
/** What the steps read of the table (tableRule; a test gives its own):
 * @typedef {{change: (values: Values, free: Values, name: string, value: unknown) =>
 *   {values: Values, free: Values, state: Shown | null}, missing: (values: Values) => Chunk[]}} Rule */

/** @param {Chunk} chunk */
export const chunkKey = ({ part, index }) => `${part}/${index}`;

/** The page's state before any change. @param {Values} values @param {Values} free @returns {PageState} */
export function pageState(values, free) {
  return { values: { ...values }, free: { ...free }, awaited: null };
}

/** The rule of `table` (null: no table, every change goes to the source). @param {import("./table.js").Table | null} table
 * @returns {Rule} */
export function tableRule(table) {
  return {
    change: (values, free, name, value) => pageChange(table, values, free, name, value),
    missing: (values) => (table ? missing(table, values) : []),
  };
}

/** A control moved: the next state, the table's state to draw (null: none here) and the chunks to fetch for it.
 * @param {PageState} page @param {Rule} rule @param {string} name @param {unknown} value
 * @returns {{page: PageState, draw: Shown | null, fetch: Chunk[]}} */
export function moved(page, rule, name, value) {
  const { values, free, state } = rule.change(page.values, page.free, name, value);
  const fetch = state ? [] : rule.missing({ ...values, ...free });
  const before = { values: page.values, free: page.free };
  const awaited = fetch.length ? { name, chunks: fetch.map(chunkKey), before } : null;
  return { page: { values, free, awaited }, draw: state, fetch };
}

/** A chunk arrived: once the awaited change has every chunk it needs, it is drawn from the table (`send`: the
 * table's transition moved the values, which the source must get).
 * @param {PageState} page @param {Rule} rule @param {Chunk} chunk
 * @returns {{page: PageState, draw: Shown | null, send: boolean}} */
export function arrived(page, rule, chunk) {
  const { awaited } = page;
  if (!awaited?.chunks.includes(chunkKey(chunk))) return { page, draw: null, send: false };
  const chunks = awaited.chunks.filter((k) => k !== chunkKey(chunk));
  if (chunks.length) return { page: { ...page, awaited: { ...awaited, chunks } }, draw: null, send: false };
  const { values, free, state } = rule.change(page.values, page.free, awaited.name, page.values[awaited.name]);
  if (!state) return { page: { ...page, awaited: null }, draw: null, send: false };
  return { page: { values, free, awaited: null }, draw: state, send: valuesKey(values) !== valuesKey(page.values) };
}

/** A chunk the awaited change needs cannot be had (no kernel, no file): the change is undone (`undone`: the
 * values it had asked for), a chunk of an older change is ignored.
 * @param {PageState} page @param {Chunk} chunk @returns {{page: PageState, undone: Values | null}} */
export function failed(page, chunk) {
  const { awaited } = page;
  if (!awaited?.chunks.includes(chunkKey(chunk))) return { page, undone: null };
  return { page: { ...awaited.before, awaited: null }, undone: page.values };
}

/** The kernel's `shown`: the next state, or null when it answers values the page has left (isCurrent).
 * @param {PageState} page @param {Shown} shown @returns {PageState | null} */
export function answered(page, shown) {
  if (!isCurrent(shown, page.values)) return null;
  return { values: { ...shown.values }, free: { ...(shown.free || {}) }, awaited: page.awaited };
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
  const note = html("p", { class: "attn-note", "data-note": "no-kernel" });
  const link = html("a", { href: BINDER, target: "_blank", rel: "noopener" }, "launch the lessons on Binder");
  note.append(text, link, ".");
  return note;
}

/** One control: a label and a native input that calls `changed(value)`.
 * @param {Node} node @param {(value: unknown) => void} changed @returns {Control} */
function makeControl(node, changed) {
  const id = `attn-control-${++counter}`;
  const el = html("div", { class: `attn-control attn-control-${node.kind}` });
  const label = html("label", { for: id }, node.label || "");
  if (node.tooltip) el.title = node.tooltip;
  const name = String(node.name);
  /** @type {Record<string, unknown>} */
  const traits = { ...node };
  /** @type {HTMLElement} */
  let input;
  /** @type {(traits: Record<string, unknown>) => void} */
  let set;
  if (node.kind === "dropdown") {
    const select = html("select", { id, "data-control": name });
    set = (t) => {
      if (t.options) {
        traits.options = t.options;
        select.replaceChildren(
          .../** @type {unknown[]} */ (t.options).map((o, k) => {
            return html("option", { value: String(k) }, pair(o)[0]);
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
    const group = html("div", { role: "radiogroup", id, "data-control": name, "aria-label": node.label || name });
    set = (t) => {
      if (t.options) {
        traits.options = t.options;
        group.replaceChildren(
          .../** @type {unknown[]} */ (t.options).map((o) => {
            const [text, value] = pair(o);
            const button = html("button", { type: "button", role: "radio", "data-value": JSON.stringify(value) }, text);
            button.addEventListener("click", () => changed(value));
            return button;
          }),
        );
      }
      if ("value" in t) {
        const buttons = [...group.querySelectorAll("button")];
        for (const button of buttons)
          button.setAttribute("aria-checked", String(button.dataset.value === JSON.stringify(t.value)));
        // one tab stop for the group, the chosen button (WAI-ARIA's radio group); arrow keys move in it
        const chosen = buttons.find((b) => b.getAttribute("aria-checked") === "true") || buttons[0];
        for (const button of buttons) button.tabIndex = button === chosen ? 0 : -1;
      }
    };
    group.addEventListener("keydown", (event) => {
      const steps = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
      const ev = /** @type {KeyboardEvent} */ (event);
      if (!(ev.key in steps || ev.key === "Home" || ev.key === "End")) return;
      ev.preventDefault();
      ev.stopPropagation(); // JupyterLab must not move between notebook cells
      const buttons = [...group.querySelectorAll("button")].filter((b) => !b.disabled);
      const at = buttons.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
      const n = buttons.length;
      if (!n) return;
      const to =
        ev.key === "Home"
          ? 0
          : ev.key === "End"
            ? n - 1
            : (Math.max(0, at) + steps[/** @type {keyof typeof steps} */ (ev.key)] + n) % n;
      buttons[to].focus();
      buttons[to].click(); // arrows choose as they move, as a native radio group does
    });
    input = group;
  } else if (["int-slider", "float-slider", "log-slider", "selection-slider"].includes(node.kind)) {
    const range = html("input", { type: "range", id, "data-control": name });
    const shown = html("output", { for: id });
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
      range.setAttribute("aria-valuetext", shown.textContent); // the value, not a float slider's step index
    };
    const read = () => {
      const steps = node.kind === "selection-slider" ? stepsOf(/** @type {Node} */ (traits)) : stepsOf(node);
      return steps ? steps[Number(range.value)] : Number(range.value);
    };
    range.addEventListener(node.continuous === false ? "change" : "input", () => {
      shown.textContent = readout(read(), node.format);
      range.setAttribute("aria-valuetext", shown.textContent);
      changed(read());
    });
    input = range;
    el.append(label, range, shown);
  } else if (node.kind === "checkbox" || node.kind === "toggle") {
    const box = html("input", { type: "checkbox", id, "data-control": name });
    set = (t) => {
      if ("value" in t) box.checked = Boolean(t.value);
    };
    box.addEventListener("change", () => changed(box.checked));
    input = box;
    el.append(box, label);
  } else {
    const typed =
      node.kind === "textarea"
        ? html("textarea", { id, "data-control": name, rows: "3" })
        : html("input", {
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

// ------------------------------------------------------------------------------------------- sources
// Where the page gets what its table lacks: a running kernel (custom messages) or the files beside a page with no
// kernel (script tags). `computes`: whether it computes a state no table holds (a typed value).
/** @typedef {{computes: boolean, fetch: (chunk: Chunk) => Promise<boolean>, send: (values: Values) => void,
 *   explains: (view: string) => boolean, explain: (view: string, row: number, col: number, values: Values) =>
 *   Promise<string>, preload: () => Promise<unknown>[], close: () => void}} Source */

/** The kernel: chunks and hover texts asked in custom messages, values sent as the `values` trait.
 * @param {AnyModel} model @param {import("./table.js").Table | null} table @returns {Source} */
export function kernelSource(model, table) {
  /** @type {Map<string, (ok: boolean) => void>} the chunks asked for, not arrived yet: each asked once */
  const chunks = new Map();
  /** @type {Map<string, Promise<boolean>>} */
  const arriving = new Map();
  /** @type {Map<number, (text: string) => void>} */
  const texts = new Map();
  let asked = 0;
  /** @param {unknown} content @param {DataView[]} buffers */
  const onMessage = (content, buffers) => {
    const msg = /** @type {Record<string, unknown>} */ (content);
    if (msg?.type === "table-chunk" && table) {
      const chunk = /** @type {{type: string, part: number, index: number, payload: unknown}} */ (msg);
      addChunkMessage(table, chunk, buffers);
      const key = chunkKey(chunk);
      chunks.get(key)?.(true);
      chunks.delete(key);
      arriving.delete(key);
    } else if (msg?.kind === "explained") {
      texts.get(Number(msg.id))?.(String(msg.text ?? ""));
      texts.delete(Number(msg.id));
    }
  };
  model.on("msg:custom", onMessage);
  return {
    computes: true,
    fetch: (chunk) => {
      const key = chunkKey(chunk);
      if (table?.parts[chunk.part].chunks.has(chunk.index)) return Promise.resolve(true);
      if (!arriving.has(key)) {
        arriving.set(key, new Promise((resolve) => chunks.set(key, resolve)));
        model.send({ kind: "chunk", ...chunk });
      }
      return /** @type {Promise<boolean>} */ (arriving.get(key));
    },
    send: (values) => {
      model.set("values", values);
      model.save_changes();
    },
    explains: () => true,
    // a cell's explanation ("" when no answer comes within ANSWER_MS)
    explain: (view, row, col) =>
      new Promise((resolve) => {
        const id = ++asked;
        const timer = setTimeout(() => {
          texts.delete(id);
          resolve("");
        }, ANSWER_MS);
        texts.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        model.send({ kind: "explain", view, row, col, id });
      }),
    preload: () => [],
    close: () => model.off("msg:custom", onMessage),
  };
}

/** The files beside a page with no kernel (table.js loadChunk, loadExplanations); nothing is sent.
 * @param {import("./table.js").Table | null} table @returns {Source} */
export function fileSource(table) {
  return {
    computes: false,
    fetch: (chunk) => (table ? loadChunk(table, chunk.part, chunk.index) : Promise.resolve(false)),
    send: () => {},
    explains: (view) => Boolean(table?.explanations[view]),
    // from the view's texts (loaded once drawn: a hover before that waits for the file)
    explain: (view, row, col, values) => {
      if (!table) return Promise.resolve("");
      const said = explanation(table, view, values, row, col);
      if (said !== null) return Promise.resolve(said);
      return loadExplanations(table, view).then(() => explanation(table, view, values, row, col) ?? "");
    },
    preload: () => (table ? Object.keys(table.explanations).map((view) => loadExplanations(table, view)) : []),
    close: () => {},
  };
}

// ------------------------------------------------------------------------------------------- render
/** @type {import("@anywidget/types").Render<Model>} */
function render({ model, el }) {
  const tree = model.get("tree");
  const payload = model.get("table");
  const table = payload && "format" in payload ? decodeTable(/** @type {Payload} */ (payload)) : null;
  const source = model.get("kernel") ? kernelSource(model, table) : fileSource(table);
  const rule = tableRule(table);
  const root = html("div", {
    class: "attnlib-explorer",
    "data-explorer": model.get("explorer") || "",
    "data-shown": "0",
    "data-lm-suppress-shortcuts": "true",
  });
  // a source that computes nothing: the controls the table does not cover stay disabled, whatever a state says
  const off = source.computes ? [] : uncovered(tree, table);
  let page = pageState(model.get("values") || {}, model.get("shown")?.free || {});
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
  /** @type {HTMLElement | null} the note of a change whose chunk no source has */
  let chunkNote = null;
  /** @param {string} view */
  const hostOf = (view) => ({
    send: (/** @type {Record<string, unknown>} */ msg) => model.send({ ...msg, view }),
    asks: () => source.explains(view),
    explain: (/** @type {number} */ row, /** @type {number} */ col) =>
      source.explain(view, row, col, { ...page.values, ...page.free }),
  });

  /** @param {Node} node @returns {HTMLElement} */
  const build = (node) => {
    /** @type {HTMLElement} */
    let out;
    if (node.children) {
      out = html("div", { class: `attn-box attn-${node.kind}` });
      out.append(...node.children.map(build));
    } else if (node.kind === "view") {
      out = html("div", { class: "attn-view", "data-view": String(node.name) });
      const heatmap = createHeatmap(out, hostOf(String(node.name)));
      views.set(String(node.name), { draw: heatmap.draw, look: node.look || {} });
    } else if (node.kind === "message") {
      out = html("div", { class: "attn-message", role: "status", "aria-live": "polite" });
      message = out;
    } else if (node.kind === "html") {
      out = html("div", { class: "attn-text" });
      if (node.name) {
        out.dataset.text = node.name;
        texts.set(node.name, out);
      } else out.innerHTML = String(node.value ?? "");
    } else if (node.name && CONTROL_KINDS.includes(node.kind)) {
      const name = node.name;
      const control = makeControl(node, (value) => changed(name, value));
      controls.set(name, control);
      out = control.el;
    } else out = html("div");
    // a typed control's size is its input's; any other part's, its own
    const styled = node.name && TYPED.includes(node.kind) ? controls.get(node.name)?.input || out : out;
    if (node.css) for (const [k, v] of Object.entries(node.css)) styled.style.setProperty(k, v);
    if (node.visible_if || node.hidden_if) ruled.push([node, out]);
    return out;
  };

  /** The controls set to `values`. @param {Values} values */
  const setValues = (values) => {
    for (const [name, value] of Object.entries(values)) controls.get(name)?.set({ value });
  };

  /** Every output set to `state`, the controls to the page's values; then the event. @param {Shown} state
   * @param {"table" | "kernel" | "initial"} source */
  const apply = (state, source) => {
    const { values } = page;
    for (const [name, traits] of Object.entries(state.controls || {}))
      controls
        .get(name)
        ?.set({ .../** @type {Record<string, unknown>} */ (traits), ...(off.includes(name) && { disabled: true }) });
    setValues(values);
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

  let aroundQueued = false;
  /** Once idle after a state is drawn: the chunks one step from the values shown (table.js neighbours), so that
   * the next step of a slider or a menu finds its chunk here. */
  const fetchAround = () => {
    if (!table || aroundQueued) return;
    aroundQueued = true;
    idle(() => {
      aroundQueued = false;
      for (const chunk of neighbours(table, { ...page.values, ...page.free })) source.fetch(chunk);
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

  /** A chunk the awaited change needs: fetched, then the change drawn, or undone when no source has it.
   * @param {Chunk} chunk */
  const fetchFor = (chunk) =>
    source.fetch(chunk).then((ok) => {
      if (ok) {
        const step = arrived(page, rule, chunk);
        page = step.page;
        if (step.draw) apply(step.draw, "table");
        if (step.send) source.send(page.values);
        return;
      }
      const { page: after, undone } = failed(page, chunk);
      if (!undone) return;
      page = after;
      setValues(page.values);
      const named = table?.parts[chunk.part].chunk?.control ?? "";
      chunkNote = noKernelNote(
        `The states of ${named} = ${readout(undone[named], undefined)} were not saved with this page; a running kernel computes them: `,
      );
      root.append(chunkNote);
    });

  /** A control moved in the page. @param {string} name @param {unknown} value */
  const changed = (name, value) => {
    const step = moved(page, rule, name, value);
    page = step.page;
    chunkNote?.remove();
    chunkNote = null;
    if (step.draw) apply(step.draw, "table");
    else setValues(page.values);
    step.fetch.forEach(fetchFor);
    source.send(page.values);
  };

  /** Once drawn, what the page fetches: the chunks of a table marked prefetch, else those one step from the first
   * state, and what the source preloads (with no kernel, every view's hover texts). The root's `data-fetched` is
   * "true" once all of it is here (at once when there is nothing to fetch). */
  const fetchRest = () => {
    const marked = table ? prefetched(table) : [];
    const chunks = table && !marked.length ? neighbours(table, { ...page.values, ...page.free }) : marked;
    Promise.all([...chunks.map(source.fetch), ...source.preload()]).then(() => {
      root.dataset.fetched = "true";
    });
  };

  /** `shown` from the kernel: applied while current, else dropped. */
  const fromKernel = () => {
    const shown = model.get("shown");
    const next = shown && answered(page, shown);
    if (!next) return;
    page = next;
    apply(shown, "kernel");
  };

  // keys typed into the controls are theirs: JupyterLab's notebook must not take an arrow key for a cell move
  root.addEventListener("keydown", (ev) => {
    if (ev.target instanceof Element && ev.target.closest("input, select, textarea, button")) ev.stopPropagation();
  });
  root.append(build(tree));
  for (const name of off) controls.get(name)?.disable(true);
  if (off.length) {
    const states = table ? `${table.nRows} states were computed in advance; ` : "";
    root.append(noKernelNote(`${states}${off.join(", ")} need${off.length === 1 ? "s" : ""} a running kernel: `));
  }
  el.append(root);
  const initial = (table && lookup(table, { ...page.values, ...page.free })) || model.get("shown");
  apply(/** @type {Shown} */ (initial), "initial");
  idle(fetchRest);
  model.on("change:shown", fromKernel);
  return () => {
    model.off("change:shown", fromKernel);
    source.close();
  };
}

export default { render };
