// @ts-check
// The page's half of attnlib's tables of states (attnlib/show/table.py writes them): pure functions that look
// up what Python computed. Nothing here computes a number, a label or a transition: Python decides, the page
// looks it up. The format and the one coverage rule are described in table.py's docstring; in short, a row
// covers the page's values when every enumerable control is on the row's key and every free (typed) control
// equals the value the row holds for it.

/**
 * @typedef {DataView | ArrayBuffer | ArrayBufferView} Bytes
 * @typedef {{
 *   format: number, explorer: string, controls: string[], grid: unknown[][], free: string[],
 *   outputs: [string, string][], pool: unknown[], width: number, keys: Bytes, cells: Bytes,
 *   matrices: Bytes, offsets: Bytes, aliases: [number, number[], number][], tolerance: number
 * }} Payload  what Table.to_page() gives, as the page receives it (bytes as DataView)
 * @typedef {Record<string, unknown>} Values  control name → value (free controls' values as page_value gives them)
 * @typedef {{views: Record<string, Record<string, unknown>>, texts: Record<string, unknown>,
 *   controls: Record<string, unknown>}} State  a row in the form of Explorer.state() (a view's buffer: a DataView)
 * @typedef {{
 *   explorer: string, controls: string[], free: string[], outputs: [string, string][], pool: unknown[],
 *   grid: unknown[][], where: Map<unknown, number>[], numbers: [number, number][][], tolerance: number,
 *   nRows: number, width: number, keys: Uint32Array, cells: Uint32Array, matrices: ArrayBuffer,
 *   offsets: Uint32Array, rowOf: Map<string, number>, aliases: Map<string, number>
 * }} Table  a decoded table (read it only through the functions of this module)
 */

/**
 * Unsigned little-endian integers of `width` bytes.
 * @param {Bytes} bytes
 * @param {number} width
 * @returns {Uint32Array}
 */
function readInts(bytes, width) {
  const view = asBytes(bytes);
  const out = new Uint32Array(view.byteLength / width);
  const data = new DataView(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < out.length; i++) {
    out[i] = width === 1 ? data.getUint8(i) : width === 2 ? data.getUint16(2 * i, true) : data.getUint32(4 * i, true);
  }
  return out;
}

/**
 * @param {Bytes} bytes
 * @returns {Uint8Array}
 */
function asBytes(bytes) {
  return ArrayBuffer.isView(bytes)
    ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : new Uint8Array(/** @type {ArrayBuffer} */ (bytes));
}

/**
 * A value's identity as Python's table tells it apart (table.py `_ident`): booleans, numbers (1 and 1.0 the
 * same) and strings as themselves, anything else by its JSON.
 * @param {unknown} value
 * @returns {unknown}
 */
function ident(value) {
  return value === null || typeof value === "object" ? `json:${canonical(value)}` : value;
}

/**
 * JSON with sorted keys.
 * @param {unknown} value
 * @returns {string}
 */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = /** @type {Record<string, unknown>} */ (value);
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Equal as Python's `_same` compares them: numbers by value, booleans apart from numbers, lists and dicts by
 * their items.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return canonical(a) === canonical(b);
}

/**
 * Read a table payload (Table.to_page(), as anywidget delivers it) once, into lookup structures.
 * @param {Payload} payload
 * @returns {Table}
 */
export function decodeTable(payload) {
  if (payload.format !== 1) throw new Error(`table format ${payload.format}: this page reads format 1`);
  const width = payload.width;
  const keys = readInts(payload.keys, width);
  const cells = readInts(payload.cells, width);
  const perRow = payload.outputs.reduce((n, [kind]) => n + (kind === "views" ? 3 : 1), 0) + payload.free.length;
  const nControls = payload.controls.length;
  const nRows = perRow ? cells.length / perRow : 0;
  const source = asBytes(payload.matrices);
  const matrices = source.slice().buffer; // a copy of its own: aligned, and the page's DataViews stay valid
  const where = payload.grid.map((values) => new Map(values.map((v, k) => [ident(v), k])));
  const numbers = payload.grid.map((values) =>
    values.flatMap((v, k) => (typeof v === "number" ? [/** @type {[number, number]} */ ([v, k])] : [])),
  );
  /** @type {Map<string, number>} */
  const rowOf = new Map();
  for (let row = 0; row < nRows; row++) {
    rowOf.set(Array.from(keys.subarray(row * nControls, (row + 1) * nControls)).join(","), row);
  }
  /** @type {Map<string, number>} */
  const aliases = new Map();
  for (const [control, key, set] of payload.aliases) aliases.set(`${control}|${key.join(",")}`, set);
  return {
    explorer: payload.explorer,
    controls: payload.controls,
    free: payload.free,
    outputs: payload.outputs,
    pool: payload.pool,
    grid: payload.grid,
    where,
    numbers,
    tolerance: payload.tolerance,
    nRows,
    width: perRow,
    keys,
    cells,
    matrices,
    offsets: readInts(payload.offsets, 4),
    rowOf,
    aliases,
  };
}

/**
 * The grid index of `value` for enumerable control number `c` (a number within the table's tolerance of a
 * grid number counts as it), or -1.
 * @param {Table} table
 * @param {number} c
 * @param {unknown} value
 * @returns {number}
 */
function gridIndex(table, c, value) {
  const exact = table.where[c].get(ident(value));
  if (exact !== undefined) return exact;
  if (typeof value !== "number") return -1;
  for (const [v, k] of table.numbers[c]) {
    if (Math.abs(v - value) <= table.tolerance * Math.max(Math.abs(v), Math.abs(value))) return k;
  }
  return -1;
}

/**
 * The grid indices of the enumerable controls' values, or null when one is off the grid.
 * @param {Table} table
 * @param {Values} values
 * @returns {number[] | null}
 */
function keyOf(table, values) {
  const key = [];
  for (let c = 0; c < table.controls.length; c++) {
    const k = gridIndex(table, c, values[table.controls[c]]);
    if (k < 0) return null;
    key.push(k);
  }
  return key;
}

/**
 * The row that covers `values` (enumerable controls on its key, free controls equal to the row's), or -1.
 * @param {Table} table
 * @param {Values} values
 * @returns {number}
 */
export function find(table, values) {
  const key = keyOf(table, values);
  if (key === null) return -1;
  const row = table.rowOf.get(key.join(","));
  if (row === undefined) return -1;
  const start = (row + 1) * table.width - table.free.length;
  for (let f = 0; f < table.free.length; f++) {
    if (!same(values[table.free[f]], table.pool[table.cells[start + f]])) return -1;
  }
  return row;
}

/**
 * Row `row`'s values: the enumerable controls' (the grid's own values) and the free ones'.
 * @param {Table} table
 * @param {number} row
 * @returns {Values}
 */
export function valuesOf(table, row) {
  /** @type {Values} */
  const out = {};
  table.controls.forEach((name, c) => {
    out[name] = table.grid[c][table.keys[row * table.controls.length + c]];
  });
  const start = (row + 1) * table.width - table.free.length;
  table.free.forEach((name, f) => {
    out[name] = table.pool[table.cells[start + f]];
  });
  return out;
}

/**
 * Row `row` in the form of Explorer.state(): each view's drawn traits (its matrix as a DataView of
 * little-endian float64, as anywidget gives a view's buffer), each text, each dependent control's traits.
 * The objects are the table's own: read them, do not change them.
 * @param {Table} table
 * @param {number} row
 * @returns {State}
 */
export function stateOf(table, row) {
  /** @type {State} */
  const out = { views: {}, texts: {}, controls: {} };
  let cell = row * table.width;
  for (const [kind, name] of table.outputs) {
    if (kind === "views") {
      const look = /** @type {Record<string, unknown>} */ (table.pool[table.cells[cell]]);
      const marks = /** @type {Record<string, unknown>} */ (table.pool[table.cells[cell + 1]]);
      const m = table.cells[cell + 2];
      const start = table.offsets[m];
      const buffer = new DataView(table.matrices, start * 8, (table.offsets[m + 1] - start) * 8);
      out.views[name] = { ...look, ...marks, buffer };
      cell += 3;
    } else {
      (kind === "texts" ? out.texts : out.controls)[name] = table.pool[table.cells[cell]];
      cell += 1;
    }
  }
  return out;
}

/**
 * What the explorer shows for `values`, or null when the table does not cover them (then the kernel answers).
 * @param {Table} table
 * @param {Values} values
 * @returns {State | null}
 */
export function lookup(table, values) {
  const row = find(table, values);
  return row < 0 ? null : stateOf(table, row);
}

/**
 * The values after control `name` changed to `values[name]`: Python's transition and clamping as the table
 * recorded them (a number within the tolerance of a grid value becomes the grid's). A change the table has
 * no record of sets nothing else: Python's transition is the identity there, or the state is not in the
 * table and the kernel decides.
 * @param {Table} table
 * @param {Values} values
 * @param {string} name
 * @returns {Values}
 */
export function transition(table, values, name) {
  const out = { ...values };
  const c = table.controls.indexOf(name);
  if (c < 0) return out;
  const k = gridIndex(table, c, out[name]);
  if (k >= 0) out[name] = table.grid[c][k];
  const key = keyOf(table, out);
  if (key === null) return out;
  const set = table.aliases.get(`${c}|${key.join(",")}`);
  if (set !== undefined) Object.assign(out, table.pool[set]);
  return out;
}
