// cutune pages: what the report, index and comparison scripts share. Placed before each page's
// script inside one <script> element. Nothing here turns data into HTML: tables and lines are
// built from DOM nodes whose text is set, so database strings stay text.
"use strict";
Chart.defaults.animation = false;
// Point data arrive as {x, y} objects: skip Chart.js's parsing pass, which dominates the time
// to draw ten thousand points (charts with labels ask for parsing themselves).
Chart.defaults.parsing = false;
Chart.defaults.font.size = 11;
Chart.defaults.maintainAspectRatio = false;

const PALETTE = ["#2f6fdd", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400", "#2c3e50", "#b8860b"];

function readData() { return JSON.parse(document.getElementById("report-data").textContent); }

// ---- DOM -------------------------------------------------------------------------------------
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function byId(id) { return document.getElementById(id); }

// A config's "name=value,…" text that wraps only between its pairs (a pair longer than the cell
// still breaks, as a last resort).
function configNode(text, tag) {
  const span = el(tag || "span", null, "config");
  const parts = String(text).split(",");
  parts.forEach((part, k) => {
    span.appendChild(document.createTextNode(part + (k + 1 < parts.length ? "," : "")));
    if (k + 1 < parts.length) span.appendChild(document.createElement("wbr"));
  });
  return span;
}

// A table from rows of cells. A cell is text (or a number), a DOM node, or null ("–"). Columns
// flagged numeric align right; a column titled "config" gets configs that wrap between pairs.
function fillTable(table, headers, body, numeric, classes) {
  table.replaceChildren();
  const head = el("tr");
  headers.forEach((h) => head.appendChild(el("th", h)));
  table.appendChild(el("thead")).appendChild(head);
  const tbody = table.appendChild(el("tbody"));
  body.forEach((cells) => {
    const tr = tbody.appendChild(el("tr"));
    cells.forEach((c, i) => {
      const td = tr.appendChild(el("td"));
      if (c instanceof Node) td.appendChild(c);
      else if (headers[i] === "config" && c !== null && c !== undefined) td.appendChild(configNode(c));
      else td.textContent = c === null || c === undefined ? "–" : String(c);
      if (numeric && numeric[i]) td.classList.add("num");
      if (headers[i] === "config") td.classList.add("config");
      if (classes && classes[i]) td.classList.add(classes[i]);
    });
  });
  if (body.length === 0) {
    const td = tbody.appendChild(el("tr")).appendChild(el("td", "none", "empty"));
    td.colSpan = headers.length;
  }
  return tbody;
}

function keyValueTable(table, pairs) {
  table.replaceChildren();
  pairs.forEach(([k, v]) => {
    const tr = table.appendChild(el("tr"));
    tr.appendChild(el("td", k));
    const td = tr.appendChild(el("td"));
    if (v instanceof Node) td.appendChild(v); else td.textContent = v;
    if (v === "unknown" || v === "not measured") td.className = "unknown";
  });
}

// ---- numbers ---------------------------------------------------------------------------------
function missing(x) { return x === null || x === undefined || Number.isNaN(x); }
// Four significant digits; whole numbers from 10 000 up (13,640 rather than 1.364e+4).
function fmt(x, digits) {
  if (missing(x)) return "–";
  const v = Number(x);
  if (Math.abs(v) >= 1e4 && Math.abs(v) < 1e12) return Math.round(v).toLocaleString("en-US");
  return v.toPrecision(digits || 4);
}
function pct(x) { return missing(x) ? "–" : (100 * x).toFixed(1) + " %"; }
function count(n) { return Number(n).toLocaleString("en-US"); }
function ratioText(r) { return missing(r) ? "–" : r.toFixed(r < 10 ? 2 : 1) + "×"; }
// A short label for an axis tick: 0.002, 50, 2000, 5e-5, 2e+6.
function shortNum(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e5) return String(Number(v.toPrecision(3)));
  return v.toExponential(Math.abs(Number(v.toExponential(0)) - v) < 1e-12 * a ? 0 : 1).replace("e+", "e");
}
function geomean(values) {
  const v = values.filter((x) => x > 0 && Number.isFinite(x));
  return v.length ? Math.exp(v.reduce((s, x) => s + Math.log(x), 0) / v.length) : NaN;
}

// Ticks of a log axis from lo to hi: every 1, 2 and 5 of each decade; only the decades when the
// range spans more than five of them; finer steps when 1-2-5 would give fewer than three ticks.
function logTicks(lo, hi) {
  if (!(lo > 0) || !(hi >= lo)) return [];
  const first = Math.floor(Math.log10(lo)), last = Math.ceil(Math.log10(hi));
  const pick = (mantissas) => {
    const out = [];
    for (let e = first; e <= last; e++)
      for (const m of mantissas) {
        const v = Number((m * 10 ** e).toPrecision(6));
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
      }
    return out;
  };
  if (last - first > 5) return pick([1]);
  let ticks = pick([1, 2, 5]);
  if (ticks.length < 3) ticks = pick([1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9]);
  if (ticks.length < 3) {
    // Less than a factor of two: plain steps of 1, 2 or 5 in the right decade.
    const raw = (hi - lo) / 4, unit = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * unit).find((s) => s >= raw) || raw;
    ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi * (1 + 1e-9); v += step) ticks.push(Number(v.toPrecision(6)));
  }
  return ticks;
}
const logAxis = (title) => ({
  type: "logarithmic", title: { display: true, text: title },
  afterBuildTicks: (axis) => { axis.ticks = logTicks(axis.min, axis.max).map((value) => ({ value })); },
  ticks: { callback: (v) => shortNum(Number(v)), autoSkip: true },
});
const linAxis = (title) => ({ type: "linear", title: { display: true, text: title } });

// ---- packed columns (report.cpp: base64 of little-endian u8, u16, i32 or f32) -----------------
// A column with "values" holds 1 + the index of each entry's value in that list, 0 for none; a
// column with "at" holds entries for those results only (the others have none). Both unpack to the
// values themselves, NaN for none.
function unpack(column, length) {
  if (!column) return new Float32Array(length).fill(NaN);
  if (column.at) {
    const at = unpack(column.at), entries = unpack({ type: column.type, data: column.data, values: column.values });
    const values = new Float32Array(length).fill(NaN);
    for (let k = 0; k < at.length; k++) values[at[k]] = entries[k];
    return values;
  }
  if (column.values) {
    const index = unpack({ type: column.type, data: column.data });
    const values = new Float32Array(index.length);
    for (let k = 0; k < index.length; k++) values[k] = index[k] ? column.values[index[k] - 1] : NaN;
    return values;
  }
  const text = atob(column.data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  switch (column.type) {
    case "u8": return bytes;
    case "u16": return new Uint16Array(bytes.buffer);
    case "i32": return new Int32Array(bytes.buffer);
    case "f32": return new Float32Array(bytes.buffer);
    default: throw new Error("unknown column type " + column.type);
  }
}

// Text per result, sparse (report.cpp, TextColumn): the distinct texts, and for the results that
// have one their index and the text's. An array of the text per result, '' for none.
function unpackTexts(column, length) {
  const out = new Array(length).fill("");
  if (!column) return out;
  const at = unpack(column.result), which = unpack(column.text);
  for (let k = 0; k < at.length; k++) out[at[k]] = column.texts[which[k]];
  return out;
}

// A unit for energies of these magnitudes (J, mJ, µJ, nJ), chosen by their median so that most
// read as 1 to 999: {name, scale} where the value in that unit is joules × scale.
function energyUnit(joules) {
  const known = joules.filter((j) => j > 0).sort((a, b) => a - b);
  const typical = known.length ? known[Math.floor(known.length / 2)] : 1;
  const units = [["J", 1], ["mJ", 1e3], ["µJ", 1e6], ["nJ", 1e9]];
  const [name, scale] = units.find(([, s]) => typical * s >= 1) || units[units.length - 1];
  return { name, scale };
}

// ---- charts ----------------------------------------------------------------------------------
const charts = {};
function chart(canvas, config) {
  const id = typeof canvas === "string" ? canvas : canvas.id;
  if (charts[id]) charts[id].destroy();
  charts[id] = new Chart(typeof canvas === "string" ? byId(canvas) : canvas, config);
  return charts[id];
}
function dropCharts(prefix) {
  Object.keys(charts).filter((id) => id.startsWith(prefix)).forEach((id) => { charts[id].destroy(); delete charts[id]; });
}
// Points in x order. Without parsing (the default above), Chart.js takes a dataset's points as
// sorted by x: it reads the x range from the first and last and skips points it believes are out
// of view, so a scatter of unsorted points loses some.
function byX(points) { return points.sort((a, b) => a.x - b.x); }
// Whether points span at least two distinct x values (a chart against size needs two sizes).
function spansTwo(points) { return new Set(points.map((p) => p.x)).size >= 2; }
// A chart box with its canvas, appended to host.
function chartBox(host, id, wide) {
  const box = host.appendChild(el("div", null, wide ? "chart-box wide" : "chart-box"));
  const canvas = box.appendChild(el("canvas"));
  canvas.id = id;
  return canvas;
}

// ---- devices and runs ------------------------------------------------------------------------
function known(v, show) { return missing(v) ? "unknown" : show ? show(v) : String(v); }
function deviceRows(d) {
  const clock = missing(d.memory_clock_khz) || missing(d.bus_width_bits) ? "unknown"
    : d.memory_clock_khz / 1000 + " MHz × " + d.bus_width_bits + " bit";
  const versions = missing(d.driver_version) && missing(d.nvrtc_version) ? "unknown"
    : known(d.driver_version) + " / " + known(d.nvrtc_version);
  return [
    ["name", deviceName(d)],
    ["UUID", d.known_by_name_only ? "none: imported, known by name only" : d.uuid],
    ["compute capability", known(d.compute_capability)],
    ["multiprocessors", known(d.sm_count)],
    ["memory", known(d.memory_bytes, (v) => fmt(v / 2 ** 30, 4) + " GiB")],
    ["L2", known(d.l2_bytes, (v) => fmt(v / 2 ** 20, 3) + " MiB")],
    ["memory clock × bus", clock],
    ["theoretical bandwidth", known(d.theoretical_bandwidth_gbs, (v) => fmt(v, 4) + " GB/s")],
    ["measured copy bandwidth", missing(d.copy_bandwidth_gbs) ? "not measured"
      : fmt(d.copy_bandwidth_gbs, 4) + " GB/s" + (d.copy_bandwidth_measured_at ? " (" + d.copy_bandwidth_measured_at + ")" : "")],
    ["driver / NVRTC", versions],
  ];
}
// A device's name; an import may have stored none.
function deviceName(d) { return d.name ? d.name : "(unnamed device)"; }
function deviceLabel(d) {
  return deviceName(d) + (d.compute_capability ? " (cc " + d.compute_capability + ")" : d.known_by_name_only ? " (known by name only)" : "");
}

// The runs, one row each, and under each its command in full: commands are long (paths, every
// option) and are never clipped.
function runsTable(table, runs) {
  const headers = ["run", "measured", "strategy", "budget", "seed", "started", "finished", "status", "results", "tool"];
  const tbody = fillTable(table, headers,
    runs.map((r) => [r.id, r.provenance.label, r.strategy, r.budget, r.seed, r.started_at, r.finished_at, r.status,
      count(r.ok) + " ok of " + count(r.results), r.tool_version]),
    [true, false, false, false, true, false, false, false, true, false],
    [null, null, null, null, null, "nowrap", "nowrap", null, "nowrap", null]);
  [...tbody.children].forEach((tr, k) => {
    const r = runs[k];
    if (!r) return;
    tr.classList.add("run");
    const row = el("tr", null, "run-command");
    const td = row.appendChild(el("td", null, "command"));
    td.colSpan = headers.length;
    td.appendChild(el("span", "command: ", "label"));
    td.appendChild(document.createTextNode(r.command || "(none recorded)"));
    tr.after(row);
  });
}

function anomalyText(run, a) {
  const who = "Run " + run.id + " (" + run.provenance.label + "): ";
  if (a.kind === "time_outside_range") {
    const e = a.examples[0];
    return who + count(a.count) + " of its " + count(run.ok) + " ok results have a time outside the min–max range of " +
      "their own samples" + (e ? " (e.g. " + e.config + ": time " + fmt(e.time_ms) + " ms, samples " + fmt(e.min_ms) +
      "–" + fmt(e.max_ms) + " ms)" : "") + ". The source's time is not a statistic of the samples it recorded; " +
      "rank these configs with care.";
  }
  if (a.kind === "no_samples") return who + count(a.count) + " ok results carry no samples: their spread is unknown.";
  return who + count(a.count) + " results: " + a.kind;
}

// "How these results were measured": runs grouped by method, then every source anomaly. Returns
// the number of anomalies found.
function provenanceBlock(host, runs, prefix) {
  host.replaceChildren();
  const groups = new Map();
  runs.forEach((r) => {
    const key = r.provenance.method;
    if (!groups.has(key)) groups.set(key, { label: r.provenance.label, source: r.provenance.source, runs: [] });
    groups.get(key).runs.push(r.id);
  });
  groups.forEach((g, method) => {
    const p = host.appendChild(el("p", null, "method source-" + g.source));
    p.appendChild(el("strong", (prefix || "") + (g.runs.length > 1 ? "Runs " : "Run ") + g.runs.join(", ") + " — " + g.label + ". "));
    p.appendChild(document.createTextNode(method));
  });
  let anomalies = 0;
  runs.forEach((r) => r.anomalies.forEach((a) => {
    anomalies += a.count;
    host.appendChild(el("p", anomalyText(r, a), a.kind === "no_samples" ? "note" : "warning anomaly"));
  }));
  if (runs.length === 0) host.appendChild(el("p", "no runs", "empty"));
  return anomalies;
}

function finishRendering() {
  // Milliseconds from navigation start until everything is drawn (read by the browser test).
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-rendered", "true");
}
