// @ts-check
// The page's half of attnlib's tables of states (attnlib/show/table.py writes them): pure functions that look
// up what Python computed. Nothing here computes a number, a label or a transition: Python decides, the page
// looks it up. The format and the one coverage rule are described in table.py's docstring; in short, a row
// covers the page's values when every enumerable control is on the row's key and every free (typed) control
// equals the value the row holds for it.

/**
 * @typedef {DataView | ArrayBuffer | ArrayBufferView} Bytes
 * @typedef {{
 *   controls: string[], grid: unknown[][], free: string[], outputs: string[][], pool: unknown[],
 *   width: number, keys: Bytes, cells: Bytes, matrices: Bytes, offsets: Bytes, blocks?: Bytes | null,
 *   aliases: [number, number[], number][], chunk?: {control: string, values: unknown[], files?: string[]} | null,
 *   chunks?: Record<string, PartPayload>
 * }} PartPayload  one part (Table.to_page()): some outputs keyed by some controls
 * @typedef {PartPayload & {format: number, explorer: string, tolerance: number, parts?: undefined,
 *     prefetch?: undefined, explanations?: undefined}
 *   | {format: number, explorer: string, tolerance: number, controls: string[], free: string[],
 *      parts: PartPayload[], states: number, prefetch?: boolean, explanations?: Record<string, string>}} Payload  what Tables.to_page() (or Table.to_page()) gives, bytes as DataViews
 * @typedef {Record<string, unknown>} Values  control name → value (free controls' values as page_value gives them)
 * @typedef {{views: Record<string, Record<string, unknown>>, texts: Record<string, unknown>,
 *   controls: Record<string, unknown>}} State  a row in the form of Explorer.state() (a view's buffer: a DataView)
 * @typedef {{
 *   controls: string[], free: string[], outputs: string[][], pool: unknown[], grid: unknown[][],
 *   where: Map<unknown, number>[], numbers: [number, number][][], nRows: number, width: number,
 *   keys: Uint32Array, cells: Uint32Array, matrices: ArrayBuffer, offsets: Uint32Array,
 *   blocks: Uint32Array | null, rowOf: Map<string, number>, aliases: Map<string, number>
 * }} Rows  a decoded part, or one chunk of a chunked part
 * @typedef {{rows: Rows | null, chunk: {control: string, values: unknown[], files?: string[],
 *   where: Map<unknown, number>, numbers: [number, number][]} | null, chunks: Map<number, Rows>, controls: string[],
 *   outputs: string[][]}} Part
 * @typedef {{part: number, rows: Record<string, number[]>, texts: string[][][]}} Explained  a view's hover texts
 *   (Python's explanation_files): the distinct tables of texts, and per piece of the part ("" or a chunk's index)
 *   the one of each row
 * @typedef {{explorer: string, controls: string[], free: string[], tolerance: number, parts: Part[],
 *   nRows: number, prefetch: boolean, explanations: Record<string, string>, explained: Map<string, Explained>}} Table
 *   (nRows: the states the table answers with every chunk loaded; prefetch: fetch every chunk once drawn;
 *   explanations: each view's file of hover texts, explained: those loaded)
 *   a decoded table (read it only through the functions of this module)
 */

/** Unsigned little-endian integers of `width` bytes.
 * @param {Bytes} bytes @param {number} width @returns {Uint32Array} */
function readInts(bytes, width) {
  const view = asBytes(bytes);
  const out = new Uint32Array(view.byteLength / width);
  const data = new DataView(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < out.length; i++) {
    out[i] = width === 1 ? data.getUint8(i) : width === 2 ? data.getUint16(2 * i, true) : data.getUint32(4 * i, true);
  }
  return out;
}

/** @param {Bytes} bytes @returns {Uint8Array} */
function asBytes(bytes) {
  return ArrayBuffer.isView(bytes)
    ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : new Uint8Array(/** @type {ArrayBuffer} */ (bytes));
}

/** A value's identity as Python's table tells it apart (table.py `_ident`): booleans, numbers (1 and 1.0 the
 * same) and strings as themselves, anything else by its JSON. @param {unknown} value @returns {unknown} */
function ident(value) {
  return value === null || typeof value === "object" ? `json:${canonical(value)}` : value;
}

/** JSON with sorted keys. @param {unknown} value @returns {string} */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = /** @type {Record<string, unknown>} */ (value);
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Equal as Python's `_same` compares them: numbers by value, booleans apart from numbers, lists and dicts by
 * their items. @param {unknown} a @param {unknown} b @returns {boolean} */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return canonical(a) === canonical(b);
}

/** Grid lookups of a list of values: exact identities, and the numbers for the tolerance.
 * @param {unknown[]} values @returns {{where: Map<unknown, number>, numbers: [number, number][]}} */
function index(values) {
  return {
    where: new Map(values.map((v, k) => [ident(v), k])),
    numbers: values.flatMap((v, k) => (typeof v === "number" ? [/** @type {[number, number]} */ ([v, k])] : [])),
  };
}

/** One part's rows (or one chunk's) as lookup structures. @param {PartPayload} payload @returns {Rows} */
function decodeRows(payload) {
  const width = payload.width;
  const keys = readInts(payload.keys, width);
  const cells = readInts(payload.cells, width);
  const perRow =
    payload.outputs.reduce((n, [kind, , field]) => n + (kind === "views" && !field ? 3 : 1), 0) + payload.free.length;
  const nControls = payload.controls.length;
  const nRows = perRow ? cells.length / perRow : 0;
  const matrices = asBytes(payload.matrices).slice().buffer; // a copy of its own: aligned, and stays valid
  const grids = payload.grid.map(index);
  /** @type {Map<string, number>} */
  const rowOf = new Map();
  for (let row = 0; row < nRows; row++) {
    rowOf.set(Array.from(keys.subarray(row * nControls, (row + 1) * nControls)).join(","), row);
  }
  /** @type {Map<string, number>} */
  const aliases = new Map();
  for (const [control, key, set] of payload.aliases) aliases.set(`${control}|${key.join(",")}`, set);
  return {
    controls: payload.controls,
    free: payload.free,
    outputs: payload.outputs,
    pool: payload.pool,
    grid: payload.grid,
    where: grids.map((g) => g.where),
    numbers: grids.map((g) => g.numbers),
    nRows,
    width: perRow,
    keys,
    cells,
    matrices,
    offsets: readInts(payload.offsets, 4),
    blocks: payload.blocks ? readInts(payload.blocks, 4) : null,
    rowOf,
    aliases,
  };
}

/** Read a table payload (Tables.to_page() or Table.to_page(), as anywidget delivers it) once.
 * @param {Payload} payload @returns {Table} */
export function decodeTable(payload) {
  if (payload.format !== 1) throw new Error(`table format ${payload.format}: this page reads format 1`);
  const parts = payload.parts ?? [payload];
  /** @type {Table} */
  const table = {
    explorer: payload.explorer,
    controls: payload.controls,
    free: payload.free,
    tolerance: payload.tolerance,
    nRows: 0,
    prefetch: Boolean(payload.prefetch),
    explanations: payload.explanations ?? {},
    explained: new Map(),
    parts: parts.map((part) => {
      const chunk = part.chunk ? { ...part.chunk, ...index(part.chunk.values) } : null;
      return {
        rows: chunk ? null : decodeRows(part),
        chunk,
        chunks: new Map(),
        controls: part.controls,
        outputs: part.outputs,
      };
    }),
  };
  parts.forEach((part, p) => {
    for (const [i, chunk] of Object.entries(part.chunks ?? {})) addChunk(table, p, Number(i), chunk);
  });
  const first = table.parts[0]?.rows;
  table.nRows = payload.parts ? payload.states : first ? first.nRows : 0;
  return table;
}

/** Add chunk `index` of part `part` (Tables.chunk(part, index), from the kernel or a file) to a decoded table.
 * @param {Table} table @param {number} part @param {number} index @param {PartPayload} payload */
export function addChunk(table, part, index, payload) {
  table.parts[part].chunks.set(index, decodeRows(payload));
}

/** Add the chunk a kernel's message carries (Python's `chunk_message`, received as anywidget's
 * `msg:custom` content and buffers): its payload with each `{"$buffer": k}` as `buffers[k]`.
 * @param {Table} table @param {{type: string, part: number, index: number, payload: unknown}} content
 * @param {DataView[]} buffers */
export function addChunkMessage(table, content, buffers) {
  /** @param {unknown} value @returns {unknown} */
  const join = (value) => {
    if (Array.isArray(value)) return value.map(join);
    if (value === null || typeof value !== "object") return value;
    const record = /** @type {Record<string, unknown>} */ (value);
    if (typeof record.$buffer === "number" && Object.keys(record).length === 1) return buffers[record.$buffer];
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, join(v)]));
  };
  addChunk(table, content.part, content.index, /** @type {PartPayload} */ (join(content.payload)));
}

/** Bytes from base64 (a chunk file's buffers), as a DataView. @param {string} text @returns {DataView} */
function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new DataView(bytes.buffer);
}

/** @type {Map<string, Promise<boolean>>} each file's <script>, once per page (explorers may share one) */
const LOADING = new Map();

/** Run the file at `path` (relative to the page) as a classic <script>, which a browser runs from file:// as over
 * http, where it refuses fetch, and give what it put in `globalThis.attnlibChunks` under its name (the file's
 * name without ".js"), or null when there is no document, or the file is missing or puts nothing there.
 * @param {string} path @returns {Promise<unknown>} */
function loadFile(path) {
  if (!path || typeof document === "undefined") return Promise.resolve(null);
  const url = new URL(path, document.baseURI).href;
  let loading = LOADING.get(url);
  if (!loading) {
    loading = new Promise((resolve) => {
      const script = document.createElement("script");
      script.src = url;
      script.onload = () => resolve(true);
      script.onerror = () => {
        LOADING.delete(url); // not there now: a later change may try again
        resolve(false);
      };
      document.head.append(script);
    });
    LOADING.set(url, loading);
  }
  const key = path.replace(/^.*\//, "").replace(/\.js$/, "");
  /** @type {{attnlibChunks?: Record<string, unknown>}} */
  const shared = /** @type {any} */ (globalThis);
  return loading.then((loaded) => (loaded ? (shared.attnlibChunks?.[key] ?? null) : null));
}

/** The file of chunk `index` of part `part` that a page with no kernel loads (Python's `chunk_files`: a path
 * relative to the page), or "" when the table names none.
 * @param {Table} table @param {number} part @param {number} index @returns {string} */
export function chunkFile(table, part, index) {
  return table.parts[part].chunk?.files?.[index] ?? "";
}

/** Load chunk `index` of part `part` from its file beside the page and add it to the table: resolves true once
 * added, false when the table names no file, or the file is missing or holds another chunk (then the page says a
 * kernel computes it). @param {Table} table @param {number} part @param {number} index @returns {Promise<boolean>} */
export function loadChunk(table, part, index) {
  if (table.parts[part].chunks.has(index)) return Promise.resolve(true);
  return loadFile(chunkFile(table, part, index)).then((file) => {
    const held = /** @type {{content: any, buffers: string[]} | null} */ (file);
    if (!held?.content || held.content.part !== part || held.content.index !== index) return false;
    if (!table.parts[part].chunks.has(index)) addChunkMessage(table, held.content, held.buffers.map(fromBase64));
    return true;
  });
}

/** The chunks a table marked `prefetch` does not hold yet, [{part, index}]: what the page fetches once it has
 * drawn (none for a table not marked). @param {Table} table @returns {{part: number, index: number}[]} */
export function prefetched(table) {
  if (!table.prefetch) return [];
  const out = [];
  for (let p = 0; p < table.parts.length; p++) {
    const part = table.parts[p];
    for (let i = 0; i < (part.chunk?.values.length ?? 0); i++) if (!part.chunks.has(i)) out.push({ part: p, index: i });
  }
  return out;
}

/** Load view `view`'s hover texts from the file the table names for it (Python's `explanation_files`): resolves
 * true once the table holds them, false when it names none or the file is missing or is another's.
 * @param {Table} table @param {string} view @returns {Promise<boolean>} */
export function loadExplanations(table, view) {
  if (table.explained.has(view)) return Promise.resolve(true);
  return loadFile(table.explanations[view] ?? "").then((file) => {
    const held = /** @type {(Explained & {explorer: string, view: string}) | null} */ (file);
    if (!held || held.explorer !== table.explorer || held.view !== view || !table.parts[held.part]) return false;
    table.explained.set(view, held);
    return true;
  });
}

/** The hover text of cell (`row`, `col`) of view `view` in the state of `values`, from the texts loaded for it
 * (loadExplanations): "" for a cell with none, null when they are not loaded or the table does not cover `values`.
 * @param {Table} table @param {string} view @param {Values} values @param {number} row @param {number} col
 * @returns {string | null} */
export function explanation(table, view, values, row, col) {
  const held = table.explained.get(view);
  if (!held) return null;
  const part = table.parts[held.part];
  const rows = rowsFor(table, part, values);
  const k = rows === null ? -1 : findRow(table, rows, values, true);
  const piece = part.chunk ? String(nearest(part.chunk, values[part.chunk.control], table.tolerance)) : "";
  const texts = k < 0 ? undefined : held.texts[held.rows[piece]?.[k] ?? -1];
  return texts === undefined ? null : String(texts[row]?.[col] ?? "");
}

/** The chunks the table needs to answer `values` and that it does not hold yet: [{part, index}] (ask the kernel,
 * or load them from the page's files, then call transition and lookup again).
 * @param {Table} table @param {Values} values @returns {{part: number, index: number}[]} */
export function missing(table, values) {
  return unheld(table, values, [0]);
}

/** The chunks one step away from `values` that the table does not hold yet: for each chunked part, the chunks of
 * the values just before and just after its control's value in the part's grid, [{part, index}] (what the page
 * fetches while a learner looks, so that the next step of a slider or a menu is drawn from the table at once).
 * None for a value the part's grid does not hold.
 * @param {Table} table @param {Values} values @returns {{part: number, index: number}[]} */
export function neighbours(table, values) {
  return unheld(table, values, [-1, 1]);
}

/** For each chunked part whose grid holds its control's value in `values`, the chunks `steps` places from it in the
 * grid that the table does not hold yet, [{part, index}].
 * @param {Table} table @param {Values} values @param {number[]} steps @returns {{part: number, index: number}[]} */
function unheld(table, values, steps) {
  const out = [];
  for (let p = 0; p < table.parts.length; p++) {
    const part = table.parts[p];
    if (!part.chunk) continue;
    const i = nearest(part.chunk, values[part.chunk.control], table.tolerance);
    if (i < 0) continue;
    for (const j of steps.map((step) => i + step)) {
      if (j >= 0 && j < part.chunk.values.length && !part.chunks.has(j)) out.push({ part: p, index: j });
    }
  }
  return out;
}

/** The index of `value` in a grid (a number within the tolerance of a grid number counts as it), or -1.
 * @param {{where: Map<unknown, number>, numbers: [number, number][]}} grid @param {unknown} value
 * @param {number} tolerance @returns {number} */
function nearest(grid, value, tolerance) {
  const exact = grid.where.get(ident(value));
  if (exact !== undefined) return exact;
  if (typeof value !== "number") return -1;
  for (const [v, k] of grid.numbers) {
    if (Math.abs(v - value) <= tolerance * Math.max(Math.abs(v), Math.abs(value))) return k;
  }
  return -1;
}

/** The rows of a part that hold `values` (its own, or the chunk of `values`), or null when not loaded.
 * @param {Table} table @param {Part} part @param {Values} values @returns {Rows | null} */
function rowsFor(table, part, values) {
  if (!part.chunk) return part.rows;
  const i = nearest(part.chunk, values[part.chunk.control], table.tolerance);
  return part.chunks.get(i) ?? null;
}

/** The grid indices of a part's controls' values, or null when one is off the grid.
 * @param {Table} table @param {Rows} rows @param {Values} values @returns {number[] | null} */
function keyOf(table, rows, values) {
  const key = [];
  for (let c = 0; c < rows.controls.length; c++) {
    const k = nearest({ where: rows.where[c], numbers: rows.numbers[c] }, values[rows.controls[c]], table.tolerance);
    if (k < 0) return null;
    key.push(k);
  }
  return key;
}

/** The row of `values` in `rows` (`free`: and every free control equal to the row's), or -1.
 * @param {Table} table @param {Rows} rows @param {Values} values @param {boolean} free @returns {number} */
function findRow(table, rows, values, free) {
  const key = keyOf(table, rows, values);
  if (key === null) return -1;
  const row = rows.rowOf.get(key.join(","));
  if (row === undefined) return -1;
  if (!free) return row;
  const start = (row + 1) * rows.width - rows.free.length;
  for (let f = 0; f < rows.free.length; f++) {
    if (!same(values[rows.free[f]], rows.pool[rows.cells[start + f]])) return -1;
  }
  return row;
}

/** Matrix `m` of `rows` as a DataView of little-endian float64 (a block of a stored one: copied out).
 * @param {Rows} rows @param {number} m @returns {DataView} */
function matrix(rows, m) {
  if (!rows.blocks) {
    const start = rows.offsets[m];
    return new DataView(rows.matrices, start * 8, (rows.offsets[m + 1] - start) * 8);
  }
  const [source, sourceCols, nRows, nCols] = rows.blocks.subarray(4 * m, 4 * m + 4);
  const start = rows.offsets[source];
  if (nCols === sourceCols) return new DataView(rows.matrices, start * 8, nRows * nCols * 8);
  const out = new Float64Array(nRows * nCols);
  for (let i = 0; i < nRows; i++) {
    out.set(new Float64Array(rows.matrices, (start + i * sourceCols) * 8, nCols), i * nCols);
  }
  return new DataView(out.buffer);
}

/** Add row `row` of `rows` to `out`, in the form of Explorer.state().
 * @param {Rows} rows @param {number} row @param {State} out */
function addState(rows, row, out) {
  let cell = row * rows.width;
  for (const [kind, name, field] of rows.outputs) {
    if (kind !== "views") {
      (kind === "texts" ? out.texts : out.controls)[name] = rows.pool[rows.cells[cell]];
      cell += 1;
      continue;
    }
    out.views[name] ??= {};
    const view = out.views[name];
    for (const f of field ? [field] : ["look", "marks", "matrix"]) {
      if (f === "matrix") view.buffer = matrix(rows, rows.cells[cell]);
      else Object.assign(view, rows.pool[rows.cells[cell]]);
      cell += 1;
    }
  }
}

/** What the explorer shows for `values`, in the form of Explorer.state() (a view's matrix: a DataView of
 * little-endian float64, as anywidget gives a view's buffer), or null when the table does not cover them:
 * a control off the grid, a free control not equal to the row's, or a chunk not loaded (see `missing`).
 * The objects may be the table's own: read them, do not change them.
 * @param {Table} table @param {Values} values @returns {State | null} */
export function lookup(table, values) {
  /** @type {State} */
  const out = { views: {}, texts: {}, controls: {} };
  for (const part of table.parts) {
    const rows = rowsFor(table, part, values);
    const row = rows === null ? -1 : findRow(table, rows, values, true);
    if (rows === null || row < 0) return null;
    addState(rows, row, out);
  }
  return out;
}

/** The values after control `name` changed to `values[name]`: Python's transition and clamping as the table
 * recorded them (a number within the tolerance of a grid value becomes the grid's). A change the table has
 * no record of sets nothing else: Python's transition is the identity there, or the state is not in the
 * table and the kernel decides. A part holding a dependent control's traits gives its clamped value, looked
 * up with the values before clamping.
 * @param {Table} table @param {Values} values @param {string} name @returns {Values} */
export function transition(table, values, name) {
  const out = { ...values };
  for (const part of table.parts) {
    const rows = rowsFor(table, part, out);
    const c = rows ? rows.controls.indexOf(name) : -1;
    if (rows === null || c < 0) continue;
    const k = nearest({ where: rows.where[c], numbers: rows.numbers[c] }, out[name], table.tolerance);
    if (k >= 0) out[name] = rows.grid[c][k];
    const key = keyOf(table, rows, out);
    const set = key === null ? undefined : rows.aliases.get(`${c}|${key.join(",")}`);
    if (set !== undefined) Object.assign(out, rows.pool[set]);
  }
  for (const part of table.parts) {
    const rows = rowsFor(table, part, out);
    const row = rows === null ? -1 : findRow(table, rows, out, false);
    if (rows === null || row < 0) continue;
    let cell = row * rows.width;
    for (const [kind, control, field] of rows.outputs) {
      if (kind === "controls") {
        const traits = /** @type {Record<string, unknown>} */ (rows.pool[rows.cells[cell]]);
        if ("value" in traits) out[control] = traits.value;
      }
      cell += kind === "views" && !field ? 3 : 1;
    }
  }
  return out;
}
