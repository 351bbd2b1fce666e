// HeatmapView: a matrix drawn by the browser as SVG from numbers the kernel sends.
//
// The kernel (attnlib/widgets/view.py) syncs the traits read below; one batched change is one
// redraw. The browser sends two kinds of custom messages back:
//   {kind: "edit", row, col, text}  a cell typed by the learner (validated in Python)
//   {kind: "select", row, col}      a cell clicked or chosen with the keyboard (Enter / Space)
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
  const desc = document.createElement("p");
  desc.className = "attn-heatmap-description";
  desc.id = "attn-desc-" + Math.random().toString(36).slice(2);
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
  root.append(toolbar, figure, tableBox, tooltip, message, desc);
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

  let focused = [0, 0];   // the cell that holds tabindex=0 (roving tabindex)
  let editor = null;

  function palette() {
    return (model.get("palette") || ["#000000", "#ffffff"]).map(hexToRgb);
  }

  function colourOf(v, lo, hi, pal) {
    let t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    if (!Number.isFinite(t)) t = v > 0 ? 1 : 0;
    t = Math.min(1, Math.max(0, t));
    return pal[Math.min(pal.length - 1, Math.floor(t * pal.length))];
  }

  let built = null;  // the SVG drawn last: its structure key, geometry and cell elements

  // what both drawing paths read from the model
  function current() {
    const values = getValues();
    const nRows = values.length;
    return {
      values, nRows, nCols: nRows ? values[0].length : 0,
      rows: model.get("row_labels") || [], cols: model.get("col_labels") || [],
      lo: model.get("vmin"), hi: model.get("vmax"), decimals: model.get("decimals"),
      annotate: model.get("annotate"), pal: palette(),
    };
  }

  function rebuild() {
    const { values, nRows, nCols, rows, cols, lo, hi, decimals, annotate, pal } = current();
    const fontSize = model.get("font_size");
    const cell = model.get("cell_size");
    const title = model.get("title");
    const editable = model.get("editable");
    root.style.setProperty("--attn-font-size", fontSize + "px");

    // layout (pixels in the SVG's own units; the SVG scales crisply)
    const charW = fontSize * 0.6;
    const labelW = Math.max(1, ...rows.map((r) => String(r).length)) * charW + 8;
    const rotate = nCols > 8;
    const colLabelH = rotate ? Math.max(1, ...cols.map((c) => String(c).length)) * charW + 8 : fontSize + 8;
    const titleH = title ? fontSize * 1.2 + 10 : 4;
    const ylabelW = model.get("ylabel") ? fontSize + 8 : 0;
    const x0 = ylabelW + labelW;
    const y0 = titleH;
    const gridW = nCols * cell;
    const gridH = nRows * cell;
    const barX = x0 + gridW + 14;
    const barW = Math.max(10, fontSize);
    const tickW = Math.max(formatValue(lo, 2).length, formatValue(hi, 2).length) * charW + 10;
    const xlabelH = model.get("xlabel") ? fontSize + 8 : 0;
    const width = barX + barW + tickW;
    const height = y0 + gridH + colLabelH + xlabelH + 4;

    const parts = [];
    parts.push(`<svg xmlns="${SVG}" class="attn-heatmap-svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="grid" aria-label="${esc(title || "heatmap")}" aria-describedby="${desc.id}" font-size="${fontSize}">`);
    if (title) parts.push(`<text class="attn-title" x="${x0 + gridW / 2}" y="${fontSize * 1.2}" text-anchor="middle" font-size="${fontSize * 1.1}">${esc(title)}</text>`);
    const dpr = window.devicePixelRatio || 1;
    const labelStep = Math.max(1, Math.ceil((fontSize * 1.1) / cell));  // small cells: every k-th label
    if (!annotate && nRows) {
      parts.push(`<foreignObject x="${x0}" y="${y0}" width="${gridW}" height="${gridH}" aria-hidden="true">`);
      parts.push(`<canvas xmlns="http://www.w3.org/1999/xhtml" class="attn-canvas" width="${Math.round(gridW * dpr)}" height="${Math.round(gridH * dpr)}" style="width:${gridW}px;height:${gridH}px;display:block"></canvas></foreignObject>`);
    }
    for (let i = 0; i < nRows; i++) {
      parts.push(`<g role="row"${annotate ? "" : ' shape-rendering="crispEdges"'}>`);
      if (i % labelStep === 0) parts.push(`<text class="attn-row-label" role="rowheader" x="${x0 - 4}" y="${y0 + (i + 0.5) * cell}" text-anchor="end" dominant-baseline="central">${esc(rows[i] ?? i + 1)}</text>`);
      for (let j = 0; j < nCols; j++) {
        const v = values[i][j];
        const [r, g, b] = colourOf(v, lo, hi, pal);
        const dark = 0.299 * r + 0.587 * g + 0.114 * b <= 127.5;
        const shown = formatValue(v, decimals);
        const label = `${rows[i] ?? i + 1}, ${cols[j] ?? j + 1}: ${shown}`;
        const tab = i === focused[0] && j === focused[1] ? 0 : -1;
        const attrs = `role="gridcell" tabindex="${tab}" data-row="${i}" data-col="${j}" aria-label="${esc(label)}"${editable ? ' aria-readonly="false"' : ""}`;
        const rect = `x="${x0 + j * cell}" y="${y0 + i * cell}" width="${cell}" height="${cell}" fill="rgb(${r},${g},${b})"`;
        if (annotate) {
          parts.push(`<g class="attn-cell" ${attrs}><rect ${rect}/>`);
          parts.push(`<text x="${x0 + (j + 0.5) * cell}" y="${y0 + (i + 0.5) * cell}" text-anchor="middle" dominant-baseline="central" fill="${dark ? "#fff" : "#000"}" font-size="${fontSize * 0.9}">${esc(shown)}</text></g>`);
        } else {
          // large matrices: the colours are painted on a canvas underneath (one bitmap, cheap to repaint);
          // each cell keeps a transparent SVG rect for the pointer, the keyboard focus and its aria label
          parts.push(`<rect class="attn-cell" ${attrs} x="${x0 + j * cell}" y="${y0 + i * cell}" width="${cell}" height="${cell}" fill="none" pointer-events="all"/>`);
        }
      }
      parts.push(`</g>`);
    }
    // column labels
    for (let j = 0; j < nCols; j += labelStep) {
      const cx = x0 + (j + 0.5) * cell;
      const cy = y0 + gridH + 4;
      const text = esc(cols[j] ?? j + 1);
      if (rotate) parts.push(`<text class="attn-col-label" x="${cx}" y="${cy}" transform="rotate(-90 ${cx} ${cy})" text-anchor="end" dominant-baseline="central">${text}</text>`);
      else parts.push(`<text class="attn-col-label" x="${cx}" y="${cy + fontSize * 0.5}" text-anchor="middle" dominant-baseline="central">${text}</text>`);
    }
    if (model.get("xlabel")) parts.push(`<text class="attn-axis-label" x="${x0 + gridW / 2}" y="${height - 6}" text-anchor="middle">${esc(model.get("xlabel"))}</text>`);
    if (model.get("ylabel")) {
      const cy = y0 + gridH / 2;
      parts.push(`<text class="attn-axis-label" x="${fontSize}" y="${cy}" transform="rotate(-90 ${fontSize} ${cy})" text-anchor="middle">${esc(model.get("ylabel"))}</text>`);
    }
    // highlights: whole rows, whole columns, single cells
    const geometry = { x0, y0, cell, gridW, gridH, barX, barW, fontSize };
    parts.push(`<g class="attn-highlights">${highlightsSvg(geometry)}</g>`);
    // colour bar (aria-hidden: the table view and the description carry the numbers)
    const steps = Math.min(pal.length, 64);
    parts.push(`<g class="attn-colorbar" aria-hidden="true">`);
    for (let k = 0; k < steps; k++) {
      const [r, g, b] = pal[Math.floor(((steps - 1 - k) / steps) * pal.length)];
      parts.push(`<rect x="${barX}" y="${y0 + (k * gridH) / steps}" width="${barW}" height="${gridH / steps + 0.5}" fill="rgb(${r},${g},${b})"/>`);
    }
    parts.push(`<rect x="${barX}" y="${y0}" width="${barW}" height="${gridH}" fill="none" stroke="#444" stroke-width="0.5"/>`);
    parts.push(`<g class="attn-ticks">${ticksSvg(geometry)}</g>`);
    parts.push(`</g></svg>`);

    const hadFocus = root.contains(document.activeElement) && document.activeElement.classList?.contains("attn-cell");
    figure.innerHTML = parts.join("");
    paintCanvas();
    if (hadFocus) focusCell(focused[0], focused[1]);
    built = { key: structureKey(), geometry, palette: model.get("palette"), cells: [...figure.querySelectorAll(".attn-cell")] };
  }

  // what forces a full rebuild: anything that moves something (sizes, labels, texts, style)
  function structureKey() {
    const v = getValues() || [];
    return JSON.stringify([v.length, v.length ? v[0].length : 0, model.get("row_labels"), model.get("col_labels"),
      model.get("title"), model.get("xlabel"), model.get("ylabel"), model.get("annotate"), model.get("font_size"),
      model.get("cell_size"), model.get("editable"), formatValue(model.get("vmin"), 2).length,
      formatValue(model.get("vmax"), 2).length, model.get("highlight_color"), model.get("line_width")]);
  }

  function highlightsSvg({ x0, y0, cell, gridW, gridH }) {
    const lw = model.get("line_width");
    const colour = model.get("highlight_color");
    const boxes = [];
    for (const i of model.get("highlight_rows") || []) boxes.push([x0, y0 + i * cell, gridW, cell]);
    for (const j of model.get("highlight_cols") || []) boxes.push([x0 + j * cell, y0, cell, gridH]);
    for (const [i, j] of model.get("highlight_cells") || []) boxes.push([x0 + j * cell, y0 + i * cell, cell, cell]);
    return boxes.map(([x, y, w, h]) => `<rect class="attn-highlight" x="${x + lw / 2}" y="${y + lw / 2}" width="${Math.max(0, w - lw)}" height="${Math.max(0, h - lw)}" fill="none" stroke="${colour}" stroke-width="${lw}" pointer-events="none"/>`).join("");
  }

  function ticksSvg({ y0, gridH, barX, barW, fontSize }) {
    const lo = model.get("vmin");
    const hi = model.get("vmax");
    const ticks = [[hi, y0], [(lo + hi) / 2, y0 + gridH / 2], [lo, y0 + gridH]];
    return ticks.map(([v, y]) => `<text x="${barX + barW + 4}" y="${y}" dominant-baseline="central" font-size="${fontSize * 0.85}">${esc(formatValue(v, 2))}</text>`).join("");
  }

  // the colours of a large (unannotated) matrix: one pixel per cell, scaled up without smoothing
  function paintCanvas() {
    const canvas = figure.querySelector(".attn-canvas");
    if (!canvas) return;
    const { values, nRows, nCols, lo, hi, pal } = current();
    const small = document.createElement("canvas");
    small.width = nCols;
    small.height = nRows;
    const sctx = small.getContext("2d");
    const img = sctx.createImageData(nCols, nRows);
    for (let i = 0; i < nRows; i++) {
      for (let j = 0; j < nCols; j++) {
        const [r, g, b] = colourOf(values[i][j], lo, hi, pal);
        const k = 4 * (i * nCols + j);
        img.data[k] = r;
        img.data[k + 1] = g;
        img.data[k + 2] = b;
        img.data[k + 3] = 255;
      }
    }
    sctx.putImageData(img, 0, 0);
    const ctx = canvas.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(small, 0, 0, canvas.width, canvas.height);
  }

  // same structure: recolour and relabel the existing cells in place (no new DOM)
  function patch() {
    const { values, nCols, rows, cols, lo, hi, decimals, annotate, pal } = current();
    built.cells.forEach((g, k) => {
      const i = Math.floor(k / nCols);
      const j = k - i * nCols;
      const v = values[i][j];
      const shown = formatValue(v, decimals);
      g.setAttribute("aria-label", `${rows[i] ?? i + 1}, ${cols[j] ?? j + 1}: ${shown}`);
      if (annotate) {
        const [r, gr, b] = colourOf(v, lo, hi, pal);
        g.firstChild.setAttribute("fill", `rgb(${r},${gr},${b})`);
        const t = g.lastChild;
        t.textContent = shown;
        t.setAttribute("fill", 0.299 * r + 0.587 * gr + 0.114 * b <= 127.5 ? "#fff" : "#000");
      }
    });
    if (!annotate) paintCanvas();
    figure.querySelector(".attn-highlights").innerHTML = highlightsSvg(built.geometry);
    figure.querySelector(".attn-ticks").innerHTML = ticksSvg(built.geometry);
  }

  function draw() {
    const t0 = performance.now();
    if (built && built.key === structureKey() && built.palette === model.get("palette")) patch();
    else rebuild();
    desc.textContent = model.get("description");
    message.textContent = model.get("message");
    message.hidden = !model.get("message");
    if (!tableBox.hidden) drawTable();
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

  function cellOf(target) {
    const g = target?.closest?.(".attn-cell");
    return g ? [Number(g.dataset.row), Number(g.dataset.col), g] : null;
  }

  function focusCell(i, j) {
    const values = getValues() || [];
    if (!values.length) return;
    i = Math.max(0, Math.min(values.length - 1, i));
    j = Math.max(0, Math.min(values[0].length - 1, j));
    const old = figure.querySelector('.attn-cell[tabindex="0"]');
    if (old) old.setAttribute("tabindex", "-1");
    const g = figure.querySelector(`.attn-cell[data-row="${i}"][data-col="${j}"]`);
    if (!g) return;
    g.setAttribute("tabindex", "0");
    focused = [i, j];
    g.focus();
    showTooltip(i, j, g);
  }

  function showTooltip(i, j, g) {
    const values = getValues();
    const rows = model.get("row_labels") || [];
    const cols = model.get("col_labels") || [];
    const explanations = model.get("explanations") || [];
    const v = values[i][j];
    const why = explanations[i]?.[j] || "";
    tooltip.innerHTML = `<div class="attn-tip-head">${esc(rows[i] ?? i + 1)}, ${esc(cols[j] ?? j + 1)}</div>` +
      `<div class="attn-tip-value">${esc(String(v))}</div>` + (why ? `<div class="attn-tip-why">${esc(why)}</div>` : "");
    tooltip.hidden = false;
    const box = g.getBoundingClientRect();
    const base = root.getBoundingClientRect();
    tooltip.style.left = box.right - base.left + 6 + "px";
    tooltip.style.top = box.top - base.top + "px";
  }

  function hideTooltip() {
    tooltip.hidden = true;
  }

  function startEdit(i, j, g) {
    if (!model.get("editable")) return;
    stopEdit();
    const box = g.getBoundingClientRect();
    const base = root.getBoundingClientRect();
    editor = document.createElement("input");
    editor.type = "text";
    editor.className = "attn-heatmap-editor";
    editor.value = String(getValues()[i][j]);
    editor.setAttribute("aria-label", `new value for ${(model.get("row_labels") || [])[i] ?? i + 1}, ${(model.get("col_labels") || [])[j] ?? j + 1}`);
    editor.style.left = box.left - base.left + "px";
    editor.style.top = box.top - base.top + "px";
    editor.style.width = Math.max(box.width, 60) + "px";
    editor.style.height = box.height + "px";
    root.appendChild(editor);
    editor.focus();
    editor.select();
    editor.addEventListener("keydown", (ev) => {
      ev.stopPropagation();
      if (ev.key === "Enter") {
        model.send({ kind: "edit", row: i, col: j, text: editor.value });
        stopEdit();
        focusCell(i, j);
      } else if (ev.key === "Escape") {
        stopEdit();
        focusCell(i, j);
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

  figure.addEventListener("mouseover", (ev) => {
    const c = cellOf(ev.target);
    if (c) showTooltip(c[0], c[1], c[2]);
  });
  figure.addEventListener("mouseleave", hideTooltip);
  figure.addEventListener("focusin", (ev) => {
    const c = cellOf(ev.target);
    if (c) showTooltip(c[0], c[1], c[2]);
  });
  figure.addEventListener("focusout", hideTooltip);
  figure.addEventListener("click", (ev) => {
    const c = cellOf(ev.target);
    if (!c) return;
    focusCell(c[0], c[1]);
    model.send({ kind: "select", row: c[0], col: c[1] });
    if (model.get("editable")) startEdit(c[0], c[1], c[2]);
  });
  figure.addEventListener("keydown", (ev) => {
    const c = cellOf(ev.target);
    if (!c) return;
    const [i, j] = c;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[ev.key]) {
      ev.preventDefault();
      ev.stopPropagation();  // JupyterLab must not move between notebook cells
      focusCell(i + moves[ev.key][0], j + moves[ev.key][1]);
    } else if (ev.key === "Home" || ev.key === "End") {
      ev.preventDefault();
      ev.stopPropagation();
      focusCell(i, ev.key === "Home" ? 0 : (getValues()[0] || []).length - 1);
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      ev.stopPropagation();
      model.send({ kind: "select", row: i, col: j });
      if (model.get("editable")) startEdit(i, j, c[2]);
    } else if (ev.key === "Escape") {
      hideTooltip();
    }
  });
  tableToggle.addEventListener("click", () => {
    tableBox.hidden = !tableBox.hidden;
    tableToggle.setAttribute("aria-pressed", String(!tableBox.hidden));
    if (!tableBox.hidden) drawTable();
  });

  model.on("change", draw);
  draw();
  return () => model.off("change", draw);
}

export default { render };
