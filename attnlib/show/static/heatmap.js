// HeatmapView: a matrix drawn by the browser from numbers the kernel sends.
//
// The kernel (attnlib/show/view.py) syncs the traits read below; one batched change is one
// redraw. It is SVG, vector, crisp at any zoom, in two parts:
//   - the frame: title, row and column labels, axis labels, the colour bar (bands, outline, ticks),
//     rebuilt only when something moves (sizes, labels, style);
//   - the grid over the frame's grid area: one rectangle per cell and, when annotated, its number,
//     patched in place (a new matrix writes only the cells whose colour or number changed; a new
//     shape adds or removes the cells of the rows and columns that came or went), with the
//     highlights and the pointer's / keyboard's outline on top.
// Matrices of more than VECTOR_MAX cells (a 64×64 positional encoding) are the exception: their
// cells are one pixel each on a canvas under the grid, scaled up without smoothing (crisp edges at
// any zoom). Thousands of rectangles cost more to restyle and paint than the canvas (64×64: 69 ms
// per change against 32). Small matrices have no canvas: Chromium composites every canvas as a layer
// of its own, and its compositing step ("Layerize", run over the whole page at each change) grew
// with their number: 46 canvases in a notebook of all the explorers made it 10-13 ms per frame,
// against 1-2 ms without them (bench/trace_browser.py --layers).
// The browser sends three kinds of custom messages back:
//   {kind: "edit", row, col, text}      a cell typed by the learner (validated in Python)
//   {kind: "select", row, col}          a cell clicked or chosen with the keyboard (Enter / Space)
//   {kind: "explain", row, col, version} the text of a cell the pointer or the keyboard reached; the
//                                        kernel answers {kind: "explanation", row, col, version, text}
//                                        (written only when asked: a change sends numbers only)
// Accessibility: the grid is focusable, named by the title and described by the description;
// arrow keys, Home and End move between cells, each cell is announced (value and explanation), and
// the "table" button shows every number as an HTML table.
// No build step, no CDN: this file is the whole front end.

const SVG = "http://www.w3.org/2000/svg";

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function formatValue(v, decimals) {
  if (!Number.isFinite(v)) return String(v);
  if (v !== 0 && (Math.abs(v) < Math.pow(10, -decimals) || Math.abs(v) >= 1e5)) {
    return v.toExponential(1).replace("e+", "e+0").replace(/e\+0(\d\d)/, "e+$1").replace(/e-(\d)$/, "e-0$1");
  }
  const text = v.toFixed(decimals);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

function setText(node, text) {  // touch the DOM only when the text changes (no needless layout)
  if (node.textContent !== text) node.textContent = text;
}

function uid(prefix) {
  return prefix + Math.random().toString(36).slice(2);
}

const HOVER_COLOUR = "#ff8c00";
const VECTOR_MAX = 1024;  // cells drawn as SVG rectangles; more than this, as a canvas of one pixel per cell

// the traits a draw reads: a change of any of them draws the view again (tests/test_widget_core.py
// checks this list against HeatmapView's synced traits)
const DRAWN = ["buffer", "shape", "row_labels", "col_labels", "title", "xlabel", "ylabel", "annotate", "decimals",
  "precision", "vmin", "vmax", "palette", "highlight_rows", "highlight_cols", "highlight_cells", "editable",
  "message", "description", "font_size", "cell_size", "highlight_color", "line_width"];

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "attn-heatmap";
  // keys pressed inside the heatmap (arrows, Enter, Escape) are ours, not JupyterLab's shortcuts
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  const toolbar = document.createElement("div");
  toolbar.className = "attn-heatmap-toolbar";
  const tableToggle = document.createElement("button");
  tableToggle.type = "button";
  tableToggle.className = "attn-heatmap-table-toggle";
  tableToggle.textContent = "table";
  tableToggle.setAttribute("aria-pressed", "false");
  toolbar.appendChild(tableToggle);
  const figure = document.createElement("div");
  figure.className = "attn-heatmap-figure";
  const frame = document.createElementNS(SVG, "svg");
  frame.setAttribute("class", "attn-heatmap-svg");
  frame.setAttribute("aria-hidden", "true");  // the grid carries the name, the table the numbers
  const grid = document.createElementNS(SVG, "svg");
  grid.setAttribute("class", "attn-heatmap-grid");
  grid.setAttribute("tabindex", "0");
  grid.setAttribute("role", "application");
  grid.setAttribute("aria-roledescription", "heatmap");
  const layer = (name, attributes) => grid.appendChild(svgElement("g", { class: name, ...attributes }));
  const cellLayer = layer("attn-cells", { "shape-rendering": "crispEdges" });
  const numberLayer = layer("attn-numbers", { "text-anchor": "middle", "dominant-baseline": "central" });
  // highlighted rows, columns and cells; the pointer's and the keyboard's cell. Edges on whole device
  // pixels ("crispEdges"): the grid may sit at a fractional offset in the page, and a line there would
  // be smeared over two pixels in a blend of its colour and the cell's
  // (written through write(), as the cells are: {el, shows})
  const highlights = { el: layer("attn-highlights", { fill: "none", "shape-rendering": "crispEdges" }), shows: {} };
  const outline = { el: layer("attn-outline", { fill: "none", stroke: HOVER_COLOUR, "stroke-width": 2, "shape-rendering": "crispEdges" }), shows: {} };
  const pixels = document.createElement("canvas");  // large matrices: one pixel per cell, under the grid
  pixels.className = "attn-heatmap-pixels";
  pixels.setAttribute("aria-hidden", "true");
  figure.append(frame, pixels, grid);  // the tooltip and, while a cell is typed in, the editor go in it too
  const desc = document.createElement("p");
  desc.className = "attn-heatmap-description";
  desc.id = uid("attn-desc-");
  const live = document.createElement("p");  // the cell under the keyboard, read out
  live.className = "attn-heatmap-description";
  live.setAttribute("aria-live", "polite");
  grid.setAttribute("aria-describedby", desc.id);
  const tableBox = document.createElement("div");
  tableBox.className = "attn-heatmap-table";
  tableBox.hidden = true;
  const tooltip = document.createElement("div");
  tooltip.className = "attn-heatmap-tooltip";
  tooltip.setAttribute("role", "tooltip");
  tooltip.hidden = true;
  const message = document.createElement("div");
  message.className = "attn-heatmap-message";
  message.setAttribute("role", "status");
  message.setAttribute("aria-live", "polite");
  figure.appendChild(tooltip);
  root.append(toolbar, figure, tableBox, message, desc, live);
  el.appendChild(root);

  // the matrix arrives as raw little-endian float64 bytes (a binary buffer, no JSON) plus its shape
  let cache = { buffer: null, shape: null, rows: [] };
  function getValues() {
    const buffer = model.get("buffer");
    const shape = model.get("shape") || [0, 0];
    if (buffer === cache.buffer && shape === cache.shape) return cache.rows;
    let bytes = buffer;
    if (ArrayBuffer.isView(bytes)) bytes = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const flat = bytes && bytes.byteLength ? new Float64Array(bytes) : new Float64Array(0);
    const [nRows, nCols] = shape;
    const rows = [];
    for (let i = 0; i < nRows; i++) rows.push(Array.from(flat.subarray(i * nCols, (i + 1) * nCols)));
    cache = { buffer, shape, rows };
    return rows;
  }

  // explanations, asked for cell by cell; forgotten when the kernel's explain_version changes. Where
  // no kernel answers in time (it was stopped or restarted, or it is busy, e.g. training a model) the
  // question lapses after ANSWER_MS and the cell shows its value alone, not a pending "…" for ever;
  // an answer that comes later is still shown
  const ANSWER_MS = 2000;
  let known = { version: null, texts: new Map() };
  function explanation(i, j) {  // the text, "" for none, or null while the kernel is asked
    if (!model.get("explained")) return "";
    const version = model.get("explain_version");
    if (known.version !== version) known = { version, texts: new Map() };
    const key = i + "," + j;
    if (!known.texts.has(key)) {
      known.texts.set(key, null);
      model.send({ kind: "explain", row: i, col: j, version });
      setTimeout(() => {
        if (known.version === version && known.texts.get(key) === null) learn(i, j, version, "");
      }, ANSWER_MS);
    }
    return known.texts.get(key);
  }
  function learn(row, col, version, text) {  // a cell's text is known: show it where it is shown
    if (known.version !== version) known = { version, texts: new Map() };
    known.texts.set(row + "," + col, text);
    const shows = (cell) => cell && cell[0] === row && cell[1] === col;
    if (!tooltip.hidden && shows(tooltip.cell)) showTooltip(row, col);
    if (document.activeElement === grid && shows(focused)) announce();
  }
  model.on("msg:custom", (message) => {
    if (message.kind === "explanation" && message.version === model.get("explain_version")) {
      learn(message.row, message.col, message.version, message.text);
    }
  });

  let focused = [0, 0];  // the keyboard's cell
  let hover = null;      // the pointer's cell
  let editor = null;
  let geometry = null;   // of the frame drawn last, with the key that says when to rebuild it

  function palette() {
    return (model.get("palette") || ["#000000", "#ffffff"]).map(hexToRgb);
  }

  function colourOf(v, lo, hi, pal) {
    let t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    if (!Number.isFinite(t)) t = v > 0 ? 1 : 0;
    t = Math.min(1, Math.max(0, t));
    return pal[Math.min(pal.length - 1, Math.floor(t * pal.length))];
  }

  function labelOf(i, j) {
    return [(model.get("row_labels") || [])[i] ?? i + 1, (model.get("col_labels") || [])[j] ?? j + 1];
  }

  // what forces a new frame: anything that moves something (sizes, labels, texts, style)
  function structureKey() {
    const v = getValues() || [];
    return JSON.stringify([v.length, v.length ? v[0].length : 0, model.get("row_labels"), model.get("col_labels"),
      Boolean(model.get("title")), model.get("xlabel"), model.get("ylabel"), model.get("font_size"), model.get("annotate"),
      model.get("cell_size"), model.get("palette"), formatValue(model.get("vmin"), 2).length,
      formatValue(model.get("vmax"), 2).length]);
  }

  // the grid's elements are kept from one frame to the next: cell (i, j) keeps its rectangle and its
  // number while the matrix has that cell, so a new row or column (a token added, d_model stepped)
  // adds elements for the new cells only and leaves the others as they are, instead of parsing and
  // restyling every cell again. pool.cells[i][j] = {el, shows}: the element and what it shows now
  const rects = { cell: null, cells: [] };
  const numbers = { cell: null, cells: [] };

  function svgElement(name, attributes) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    return node;
  }

  // pool holds exactly the cells of an nRows × nCols matrix of cells of size cell, in layer, in row-major
  // order (make(i, j): a new cell's element)
  function fit(pool, layer, nRows, nCols, cell, make) {
    if (pool.cell !== cell) {  // every element would move: start again
      layer.replaceChildren();
      pool.cell = cell;
      pool.cells = [];
    }
    const drop = (row, n) => { for (const c of row.splice(n)) c.el.remove(); };
    for (const row of pool.cells.splice(nRows)) drop(row, 0);
    for (let i = 0; i < nRows; i++) {
      const row = pool.cells[i] || (pool.cells[i] = []);
      drop(row, nCols);
      if (row.length === nCols) continue;
      const added = document.createDocumentFragment();
      const last = row.length ? row[row.length - 1].el : null;
      for (let j = row.length; j < nCols; j++) {
        const el = make(i, j);
        added.appendChild(el);
        row.push({ el, shows: {} });
      }
      if (last) last.after(added);  // after the row's cells; a new row comes after all others
      else layer.appendChild(added);
    }
  }

  // the frame around the grid and the grid's elements (key: its structureKey()); the grid at (x0, y0)
  function buildFrame(key) {
    const values = getValues();
    const nRows = values.length;
    const nCols = nRows ? values[0].length : 0;
    const rows = model.get("row_labels") || [];
    const cols = model.get("col_labels") || [];
    const fontSize = model.get("font_size");
    const cell = model.get("cell_size");
    const title = model.get("title");
    root.style.setProperty("--attn-font-size", fontSize + "px");

    const charW = fontSize * 0.6;
    const labelW = Math.max(1, ...rows.map((r) => String(r).length)) * charW + 8;
    const rotate = nCols > 8;
    const colLabelH = rotate ? Math.max(1, ...cols.map((c) => String(c).length)) * charW + 8 : fontSize + 8;
    const titleH = title ? fontSize * 1.2 + 10 : 4;
    const ylabelW = model.get("ylabel") ? fontSize + 8 : 0;
    const x0 = Math.round(ylabelW + labelW);
    const y0 = Math.round(titleH);
    const gridW = nCols * cell;
    const gridH = nRows * cell;
    const barX = x0 + gridW + 14;
    const barW = Math.max(10, fontSize);
    const lo = model.get("vmin");
    const hi = model.get("vmax");
    const tickW = Math.max(formatValue(lo, 2).length, formatValue(hi, 2).length) * charW + 10;
    const xlabelH = model.get("xlabel") ? fontSize + 8 : 0;
    const width = barX + barW + tickW;
    const height = y0 + gridH + colLabelH + xlabelH + 4;
    const labelStep = Math.max(1, Math.ceil((fontSize * 1.1) / cell));  // small cells: every k-th label

    const parts = [];
    parts.push(`<text class="attn-title" x="${x0 + gridW / 2}" y="${fontSize * 1.2}" text-anchor="middle" font-size="${fontSize * 1.1}"></text>`);
    for (let i = 0; i < nRows; i += labelStep) {
      parts.push(`<text class="attn-row-label" x="${x0 - 4}" y="${y0 + (i + 0.5) * cell}" text-anchor="end" dominant-baseline="central">${esc(rows[i] ?? i + 1)}</text>`);
    }
    // rotated column labels share one rotated group: (x, y) in it is (y, -x) on screen. One transform
    // for all of them, not one per label, keeps the browser's compositing step ("Layerize") short
    if (rotate) parts.push(`<g transform="rotate(-90)">`);
    for (let j = 0; j < nCols; j += labelStep) {
      const cx = x0 + (j + 0.5) * cell;
      const cy = y0 + gridH + 4;
      const text = esc(cols[j] ?? j + 1);
      if (rotate) parts.push(`<text class="attn-col-label" x="${-cy}" y="${cx}" text-anchor="end" dominant-baseline="central">${text}</text>`);
      else parts.push(`<text class="attn-col-label" x="${cx}" y="${cy + fontSize * 0.5}" text-anchor="middle" dominant-baseline="central">${text}</text>`);
    }
    if (rotate) parts.push(`</g>`);
    if (model.get("xlabel")) parts.push(`<text class="attn-axis-label" x="${x0 + gridW / 2}" y="${height - 6}" text-anchor="middle">${esc(model.get("xlabel"))}</text>`);
    if (model.get("ylabel")) {
      const cy = y0 + gridH / 2;
      parts.push(`<text class="attn-axis-label" x="${fontSize}" y="${cy}" transform="rotate(-90 ${fontSize} ${cy})" text-anchor="middle">${esc(model.get("ylabel"))}</text>`);
    }
    // colour bar: its bands, top = vmax, each overlapping the next by half a pixel (no seams), its
    // outline and three ticks (their texts are filled in by patchFrame)
    parts.push(`<g class="attn-colorbar">`);
    const pal = palette();
    const steps = Math.min(pal.length, 64);
    parts.push(`<g shape-rendering="crispEdges">`);
    for (let k = 0; k < steps; k++) {
      const [r, g, b] = pal[Math.floor(((steps - 1 - k) / steps) * pal.length)];
      const band = gridH / steps;
      parts.push(`<rect x="${barX}" y="${y0 + k * band}" width="${barW}" height="${k < steps - 1 ? band + 0.5 : band}" fill="rgb(${r},${g},${b})"/>`);
    }
    parts.push(`</g>`);
    parts.push(`<rect x="${barX}" y="${y0}" width="${barW}" height="${gridH}" fill="none" stroke="#444" stroke-width="0.5"/>`);
    for (const y of [y0, y0 + gridH / 2, y0 + gridH]) {
      parts.push(`<text class="attn-tick" x="${barX + barW + 4}" y="${y}" dominant-baseline="central" font-size="${fontSize * 0.85}"></text>`);
    }
    parts.push(`</g>`);
    frame.setAttribute("width", width);
    frame.setAttribute("height", height);
    frame.setAttribute("viewBox", `0 0 ${width} ${height}`);
    frame.setAttribute("font-size", fontSize);
    frame.innerHTML = parts.join("");
    // the grid: a rectangle per cell, a text per cell when annotated (coloured and filled in by paint)
    grid.setAttribute("width", gridW);
    grid.setAttribute("height", gridH);
    grid.setAttribute("viewBox", `0 0 ${gridW} ${gridH}`);
    grid.style.left = x0 + "px";
    grid.style.top = y0 + "px";
    grid.dataset.rows = nRows;
    grid.dataset.cols = nCols;
    const annotate = Boolean(model.get("annotate"));
    const large = nRows * nCols > VECTOR_MAX;
    pixels.hidden = !large;
    pixels.width = large ? nCols : 0;
    pixels.height = large ? nRows : 0;
    Object.assign(pixels.style, { left: x0 + "px", top: y0 + "px", width: gridW + "px", height: gridH + "px" });
    // the rectangles are unit squares scaled by the layer: a new cell size moves none of them
    if (large) cellLayer.setAttribute("display", "none");  // its rectangles kept for a smaller matrix
    else {
      cellLayer.removeAttribute("display");
      if (cellLayer.getAttribute("transform") !== `scale(${cell})`) cellLayer.setAttribute("transform", `scale(${cell})`);
      fit(rects, cellLayer, nRows, nCols, 1, (i, j) => svgElement("rect", { x: j, y: i, width: 1, height: 1 }));
    }
    fit(numbers, numberLayer, annotate ? nRows : 0, nCols, cell,
      (i, j) => svgElement("text", { x: (j + 0.5) * cell, y: (i + 0.5) * cell }));
    numberLayer.setAttribute("font-size", fontSize * 0.9);
    geometry = {
      key, nRows, nCols, cell, gridW, gridH, fontSize, barW, large, annotate, x0, y0,
      title: frame.querySelector(".attn-title"), ticks: [...frame.querySelectorAll(".attn-tick")],
    };
    focused = [Math.min(focused[0], Math.max(0, nRows - 1)), Math.min(focused[1], Math.max(0, nCols - 1))];
    hover = null;
  }

  // the texts of the frame that change without moving anything
  function patchFrame() {
    const title = model.get("title") || "";
    setText(geometry.title, title);
    if (grid.getAttribute("aria-label") !== (title || "heatmap")) grid.setAttribute("aria-label", title || "heatmap");
    const editable = model.get("editable") ? "true" : "false";
    if (grid.dataset.editable !== editable) grid.dataset.editable = editable;
    const lo = model.get("vmin");
    const hi = model.get("vmax");
    [hi, (lo + hi) / 2, lo].forEach((v, k) => setText(geometry.ticks[k], formatValue(v, 2)));
  }

  // an element's attribute name (or its "text", or its "html") set to value, unless it shows value
  // already: every element of the grid ({el, shows}: a cell, the highlights, the outline) is written
  // only when what it shows changes
  function write(target, name, value) {
    if (target.shows[name] === value) return;
    target.shows[name] = value;
    if (name === "text") target.el.textContent = value;
    else if (name === "html") target.el.innerHTML = value;
    else target.el.setAttribute(name, value);
  }

  // the grid's cells: each rectangle's colour and each number (and its ink) written only when it
  // changed (a large matrix: its pixels), then the highlights and the outline
  function paint() {
    const values = getValues();
    const { nRows, nCols, cell, gridW, gridH, large, annotate } = geometry;
    const lo = model.get("vmin");
    const hi = model.get("vmax");
    const pal = palette();
    const decimals = model.get("decimals");
    const image = large ? new ImageData(nCols, nRows) : null;
    for (let i = 0; i < nRows; i++) {
      for (let j = 0; j < nCols; j++) {
        const v = values[i][j];
        const [r, g, b] = colourOf(v, lo, hi, pal);
        if (large) {
          const k = 4 * (i * nCols + j);
          image.data[k] = r;
          image.data[k + 1] = g;
          image.data[k + 2] = b;
          image.data[k + 3] = 255;
        } else {
          write(rects.cells[i][j], "fill", `rgb(${r},${g},${b})`);
        }
        if (!annotate) continue;
        const number = numbers.cells[i][j];
        write(number, "text", formatValue(v, decimals));
        write(number, "fill", 0.299 * r + 0.587 * g + 0.114 * b <= 127.5 ? "#fff" : "#000");  // readable on its cell
      }
    }
    if (large) pixels.getContext("2d").putImageData(image, 0, 0);
    // highlights: whole rows, whole columns, single cells, drawn inside their cells
    const lw = model.get("line_width");
    const marks = [];
    const box = (x, y, bw, bh) => marks.push(
      `<rect x="${x + lw / 2}" y="${y + lw / 2}" width="${Math.max(0, bw - lw)}" height="${Math.max(0, bh - lw)}"/>`);
    for (const i of model.get("highlight_rows") || []) box(0, i * cell, gridW, cell);
    for (const j of model.get("highlight_cols") || []) box(j * cell, 0, cell, gridH);
    for (const [i, j] of model.get("highlight_cells") || []) box(j * cell, i * cell, cell, cell);
    write(highlights, "stroke", model.get("highlight_color"));
    write(highlights, "stroke-width", lw);
    write(highlights, "html", marks.join(""));
    paintOutline();
  }

  // the pointer's cell and the keyboard's cell, outlined
  function paintOutline() {
    const { cell } = geometry;
    const outlined = [];
    if (hover) outlined.push(hover);
    if (document.activeElement === grid) outlined.push(focused);
    const html = outlined.map(([i, j]) => `<rect x="${j * cell + 1}" y="${i * cell + 1}" width="${cell - 2}" height="${cell - 2}"/>`).join("");
    write(outline, "html", html);
  }

  function draw() {
    const t0 = performance.now();
    const key = structureKey();
    if (!geometry || geometry.key !== key) buildFrame(key);
    patchFrame();
    paint();
    setText(desc, model.get("description"));
    setText(message, model.get("message"));
    message.hidden = !model.get("message");
    if (!tableBox.hidden) drawTable();
    if (!tooltip.hidden && tooltip.cell) showTooltip(...tooltip.cell);  // the number under the pointer changed
    root.dataset.drawStart = t0.toFixed(2);  // read by bench/bench_browser.py
    root.dataset.drawMs = (performance.now() - t0).toFixed(2);
  }

  function drawTable() {
    const values = getValues() || [];
    const rows = model.get("row_labels") || [];
    const cols = model.get("col_labels") || [];
    const full = model.get("precision");
    const parts = [`<table><caption>${esc(model.get("title") || "matrix")}</caption><thead><tr><th></th>`];
    for (const c of cols) parts.push(`<th scope="col">${esc(c)}</th>`);
    parts.push(`</tr></thead><tbody>`);
    values.forEach((row, i) => {
      parts.push(`<tr><th scope="row">${esc(rows[i] ?? i + 1)}</th>`);
      for (const v of row) parts.push(`<td>${esc(formatValue(v, full))}</td>`);
      parts.push(`</tr>`);
    });
    parts.push(`</tbody></table>`);
    tableBox.innerHTML = parts.join("");
  }

  // the cell under a pointer event, or null
  function cellAt(ev) {
    if (!geometry || !geometry.nRows) return null;
    const box = grid.getBoundingClientRect();
    const i = Math.floor(((ev.clientY - box.top) / box.height) * geometry.nRows);
    const j = Math.floor(((ev.clientX - box.left) / box.width) * geometry.nCols);
    return i >= 0 && i < geometry.nRows && j >= 0 && j < geometry.nCols ? [i, j] : null;
  }

  // where cell (i, j) is in the figure (for the tooltip and the editor): from the geometry, not
  // measured, so that a redraw that moves a tooltip forces no layout of the page
  function cellBox(i, j) {
    const { x0, y0, cell } = geometry;
    return { left: x0 + j * cell, top: y0 + i * cell, width: cell, height: cell };
  }

  function cellText(i, j) {
    const values = getValues();
    const [r, c] = labelOf(i, j);
    return { head: `${r}, ${c}`, value: String(values[i][j]), why: explanation(i, j) };
  }

  function showTooltip(i, j) {
    const values = getValues();
    if (!values.length || i >= values.length || j >= values[0].length) return hideTooltip();
    const { head, value, why } = cellText(i, j);
    tooltip.innerHTML = `<div class="attn-tip-head">${esc(head)}</div>` +
      `<div class="attn-tip-value">${esc(value)}</div>` +
      (why === null ? `<div class="attn-tip-why attn-tip-pending">…</div>` : why ? `<div class="attn-tip-why">${esc(why)}</div>` : "");
    tooltip.hidden = false;
    tooltip.cell = [i, j];
    const box = cellBox(i, j);
    tooltip.style.left = box.left + box.width + 6 + "px";
    tooltip.style.top = box.top + "px";
  }

  function hideTooltip() {
    tooltip.hidden = true;
    tooltip.cell = null;
  }

  function focusCell(i, j) {
    if (!geometry || !geometry.nRows) return;
    focused = [Math.max(0, Math.min(geometry.nRows - 1, i)), Math.max(0, Math.min(geometry.nCols - 1, j))];
    grid.dataset.row = focused[0];
    grid.dataset.col = focused[1];
    if (document.activeElement !== grid) grid.focus({ preventScroll: true });  // the cell is on screen already
    announce();
    showTooltip(...focused);
    paintOutline();
  }

  // the keyboard's cell, read out: labels, value at full precision and (once it is there) its explanation
  function announce() {
    const { head, why } = cellText(...focused);
    const shown = formatValue(getValues()[focused[0]][focused[1]], model.get("precision"));
    setText(live, `${head}: ${shown}${why ? "; " + why : ""}`);
  }

  function startEdit(i, j) {
    if (!model.get("editable")) return;
    stopEdit();
    const box = cellBox(i, j);
    const [r, c] = labelOf(i, j);
    editor = document.createElement("input");
    editor.type = "text";
    editor.className = "attn-heatmap-editor";
    editor.value = String(getValues()[i][j]);
    editor.setAttribute("aria-label", `new value for ${r}, ${c}`);
    editor.style.left = box.left + "px";
    editor.style.top = box.top + "px";
    editor.style.width = Math.max(box.width, 60) + "px";
    editor.style.height = box.height + "px";
    figure.appendChild(editor);
    editor.focus();
    editor.select();
    editor.addEventListener("keydown", (ev) => {
      ev.stopPropagation();
      // back to the cell first, then away with the editor: focusing while the page's layout is still
      // clean costs nothing, after the removal it would force a layout of the page
      if (ev.key === "Enter") {
        model.send({ kind: "edit", row: i, col: j, text: editor.value });
        focusCell(i, j);
        stopEdit();
      } else if (ev.key === "Escape") {
        focusCell(i, j);
        stopEdit();
      }
    });
    editor.addEventListener("blur", () => setTimeout(stopEdit, 0));
  }

  function stopEdit() {
    if (editor) {
      const e = editor;
      editor = null;
      e.remove();
    }
  }

  grid.addEventListener("mousemove", (ev) => {
    const c = cellAt(ev);
    if (String(c) === String(hover)) return;
    hover = c;
    if (c) showTooltip(...c);
    else hideTooltip();
    paintOutline();
  });
  grid.addEventListener("mouseleave", () => {
    hover = null;
    hideTooltip();
    paintOutline();
  });
  grid.addEventListener("focus", () => focusCell(...focused));
  grid.addEventListener("blur", () => {
    hideTooltip();
    paintOutline();
  });
  grid.addEventListener("click", (ev) => {
    const c = cellAt(ev);
    if (!c) return;
    focusCell(...c);
    model.send({ kind: "select", row: c[0], col: c[1] });
    if (model.get("editable")) startEdit(...c);
  });
  grid.addEventListener("keydown", (ev) => {
    if (!geometry || !geometry.nRows) return;
    const [i, j] = focused;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[ev.key]) {
      ev.preventDefault();
      ev.stopPropagation();  // JupyterLab must not move between notebook cells
      focusCell(i + moves[ev.key][0], j + moves[ev.key][1]);
    } else if (ev.key === "Home" || ev.key === "End") {
      ev.preventDefault();
      ev.stopPropagation();
      focusCell(i, ev.key === "Home" ? 0 : geometry.nCols - 1);
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      ev.stopPropagation();
      model.send({ kind: "select", row: i, col: j });
      if (model.get("editable")) startEdit(i, j);
    } else if (ev.key === "Escape") {
      hideTooltip();
    }
  });
  tableToggle.addEventListener("click", () => {
    tableBox.hidden = !tableBox.hidden;
    tableToggle.setAttribute("aria-pressed", String(!tableBox.hidden));
    if (!tableBox.hidden) drawTable();
  });

  // one draw per update, whatever number of these traits it changes (the update's other changes
  // run first: the draw waits for the end of the task's current job). New explanations alone draw
  // nothing: the texts shown for the pointer's or the keyboard's cell are asked for again
  let queued = false;
  function queueDraw() {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      draw();
    });
  }
  function onExplanations() {
    if (!tooltip.hidden && tooltip.cell) showTooltip(...tooltip.cell);
    if (document.activeElement === grid && geometry && geometry.nRows) announce();
  }
  for (const name of DRAWN) model.on("change:" + name, queueDraw);
  model.on("change:explain_version", onExplanations);
  draw();
  return () => {
    for (const name of DRAWN) model.off("change:" + name, queueDraw);
    model.off("change:explain_version", onExplanations);
  };
}

export default { render };
