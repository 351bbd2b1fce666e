// @ts-check
// The table of states as the page reads it, until static/table.js (helper `tables`) replaces this file: the same
// three functions, decodeTable(trait), transition(table, values, name) and lookup(table, values), over the payload
// of attnlib/show/table.py (Table.payload: 4-byte length, JSON head, matrices) and the glue of
// attnlib/show/page.py (table_trait: per row, the values of the typed controls it holds for).

/** @typedef {Record<string, unknown>} Values */
/** @typedef {{views: Record<string, Record<string, unknown>>, texts: Record<string, string>,
 *   controls: Record<string, Record<string, unknown>>}} State */
/** @typedef {{controls: string[], outputs: string[], pool: string[], rows: number[][], matrices: DataView[],
 *   index: Map<string, number>, freeNames: string[], free: Record<string, unknown[]>, freeRows: number[][],
 *   resets: string[]}} Table */

/** @param {unknown} buffer @returns {DataView} */
function asView(buffer) {
  if (buffer instanceof DataView) return buffer;
  if (ArrayBuffer.isView(buffer)) return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (buffer instanceof ArrayBuffer) return new DataView(buffer);
  return new DataView(new ArrayBuffer(0));
}

/** The key of `values` in a table whose enumerable controls are `controls` (one JSON text on both sides).
 * @param {string[]} controls @param {Values} values */
export function keyOf(controls, values) {
  return JSON.stringify(controls.map((name) => values[name]));
}

/** The page's table from the `table` trait, or null when the explorer has none.
 * @param {Record<string, unknown> | null | undefined} trait @returns {Table | null} */
export function decodeTable(trait) {
  if (!trait || !trait.payload) return null;
  const payload = asView(trait.payload);
  const length = payload.getUint32(0, true);
  const bytes = new Uint8Array(payload.buffer, payload.byteOffset + 4, length);
  const head = JSON.parse(new TextDecoder().decode(bytes));
  /** @type {DataView[]} */
  const matrices = [];
  let offset = payload.byteOffset + 4 + length;
  for (const size of head.matrices) {
    matrices.push(new DataView(payload.buffer, offset, size));
    offset += size;
  }
  const index = new Map();
  head.keys.forEach((/** @type {unknown[]} */ key, /** @type {number} */ row) => {
    index.set(JSON.stringify(key), row);
  });
  const free = /** @type {Record<string, unknown[]>} */ (trait.free || {});
  return {
    controls: head.controls,
    outputs: head.outputs,
    pool: head.pool,
    rows: head.rows,
    matrices,
    index,
    freeNames: Object.keys(free),
    free,
    freeRows: /** @type {number[][]} */ (trait.free_rows || []),
    resets: /** @type {string[]} */ (trait.resets || []),
  };
}

/** The row of `values`, or -1: its enumerable controls' key, and its typed controls as that row holds them.
 * @param {Table} table @param {Values} values */
function rowOf(table, values) {
  const row = table.index.get(keyOf(table.controls, values));
  if (row === undefined) return -1;
  const held = table.freeRows[row] || [];
  return table.freeNames.every((name, k) => table.free[name][held[k]] === values[name]) ? row : -1;
}

/** The values after control `name` changed to `values[name]`: a control that resets the typed ones (lesson 05's
 * example resets the scores) gives them the values the table holds for the new state.
 * @param {Table} table @param {Values} values @param {string} name @returns {Values} */
export function transition(table, values, name) {
  if (!table.resets.includes(name)) return values;
  const row = table.index.get(keyOf(table.controls, values));
  if (row === undefined) return values;
  const held = table.freeRows[row] || [];
  const out = { ...values };
  table.freeNames.forEach((free, k) => {
    out[free] = table.free[free][held[k]];
  });
  return out;
}

/** What the table shows for `values` (in the form of Explorer.state), or null when it does not hold them.
 * @param {Table} table @param {Values} values @returns {State | null} */
export function lookup(table, values) {
  const row = rowOf(table, values);
  if (row < 0) return null;
  /** @type {State} */
  const state = { views: {}, texts: {}, controls: {} };
  let k = 0;
  const cells = table.rows[row];
  for (const output of table.outputs) {
    const slash = output.indexOf("/");
    const kind = output.slice(0, slash);
    const name = output.slice(slash + 1);
    const value = JSON.parse(table.pool[cells[k++]]);
    if (kind === "views") {
      Object.assign(value, JSON.parse(table.pool[cells[k++]]));
      value.buffer = table.matrices[cells[k++]];
      state.views[name] = value;
    } else if (kind === "texts") state.texts[name] = value;
    else state.controls[name] = value;
  }
  return state;
}
