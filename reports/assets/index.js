// cutune index page: every report of a database, its devices, and per family the best config of
// each problem on each device side by side (reports/report.cpp, collect_index()).
(function () {
  const data = readData();
  document.body.setAttribute("data-kind", "index");
  const D = data.devices;
  const total = data.reports.reduce((s, r) => s + r.results, 0);
  byId("title").textContent = "cutune · " + data.database;
  byId("subtitle").textContent = D.length + " device(s) · " + data.families.length + " famil" +
    (data.families.length === 1 ? "y" : "ies") + " · " + count(total) + " results · " + data.reports.length + " report(s)";

  // ---- reports and devices ---------------------------------------------------------------------
  const link = (text, file) => { const a = el("a", text); a.href = file; return a; };
  const anomalous = data.reports.filter((r) => r.anomalies > 0);
  if (anomalous.length) {
    const p = byId("anomaly-warning");
    p.hidden = false;
    p.textContent = "Source anomalies: " + anomalous.map((r) => count(r.anomalies) + " result(s) of " + r.family + " on " +
      deviceName(D[r.device])).join(", ") + " have a time outside the min–max range of their own samples. Their reports say more.";
  }
  fillTable(byId("reports-table"),
    ["report", "family", "device", "results", "ok", "problems", "runs", "measured", "anomalies"],
    data.reports.map((r) => [link(r.family + " on " + deviceName(D[r.device]), r.file), r.family, deviceLabel(D[r.device]),
      count(r.results), count(r.ok), r.problems, r.runs, r.sources.join("; "), r.anomalies ? count(r.anomalies) : ""]),
    [false, false, false, true, true, true, true, false, true]);
  const resultsOn = D.map((_, k) => data.reports.filter((r) => r.device === k).reduce((s, r) => s + r.results, 0));
  fillTable(byId("devices-table"),
    ["device", "UUID", "compute capability", "multiprocessors", "memory", "measured copy bandwidth", "results"],
    D.map((d, k) => [deviceName(d), d.known_by_name_only ? "none: imported, known by name only" : d.uuid, known(d.compute_capability),
      known(d.sm_count), known(d.memory_bytes, (v) => fmt(v / 2 ** 30, 4) + " GiB"),
      missing(d.copy_bandwidth_gbs) ? "not measured" : fmt(d.copy_bandwidth_gbs, 4) + " GB/s", count(resultsOn[k])]),
    [false, false, false, true, true, true, true]);
  byId("devices-table").querySelectorAll("td").forEach((td) => {
    if (td.textContent === "unknown" || td.textContent === "not measured") td.classList.add("unknown");
  });
  if (D.length >= 2) {
    byId("compare-hint").textContent = "Two devices problem by problem: tune report --compare " + D[0].uuid + " " + D[1].uuid +
      " (devices by uuid, a uuid prefix or a name; or two run ids).";
  }

  // ---- per family: the best config of each problem on each device ------------------------------
  const host = byId("families");
  data.families.forEach((family, f) => {
    const section = host.appendChild(el("section", null, "family"));
    section.appendChild(el("h2", family.name));
    const devices = family.devices;
    section.appendChild(el("p", "The best config of each problem on each device" + (devices.length > 1 ? ", side by side; " +
      "\"× the fastest\" is the time over the fastest device's for the same problem" : "") +
      "; copy is the fraction of the device's measured copy bandwidth.", "hint"));
    const table = section.appendChild(el("div", null, "scroll")).appendChild(el("table", null, "grid side-by-side"));
    const rows = family.problems.map((p) => {
      const bests = new Map(p.best.map((b) => [b.device, b]));
      const fastest = Math.min(...p.best.map((b) => b.ms));
      return [p.key].concat(devices.map((k) => {
        const b = bests.get(k);
        if (!b) return el("span", "not measured", "empty");
        const cell = el("div", null, "best");
        const head = cell.appendChild(el("div"));
        head.appendChild(el("strong", fmt(b.ms) + " ms"));
        if (devices.length > 1 && p.best.length > 1)
          head.appendChild(el("span", b.ms === fastest ? " · fastest" : " · " + ratioText(b.ms / fastest) + " the fastest",
            b.ms === fastest ? "fastest" : "slower"));
        const metrics = [];
        if (!missing(b.copy)) metrics.push("copy " + pct(b.copy));
        else if (missing(D[k].copy_bandwidth_gbs)) metrics.push("copy: not measured");
        if (!missing(b.gbs)) metrics.push(fmt(b.gbs) + " GB/s");
        if (!missing(b.gflops)) metrics.push(fmt(b.gflops) + " GFLOP/s");
        if (metrics.length) cell.appendChild(el("div", metrics.join(" · "), "metrics"));
        cell.appendChild(configNode(b.config, "div"));
        return cell;
      }));
    });
    fillTable(table, ["problem"].concat(devices.map((k) => deviceLabel(D[k]))), rows);

    const chartHost = section.appendChild(el("div"));
    const sized = family.problems.filter((p) => p.size > 0);
    if (spansTwo(sized.map((p) => ({ x: p.size })))) {
      chart(chartBox(chartHost, "chart-family-" + f, true), {
        type: "line",
        data: { datasets: devices.map((k, j) => ({
          label: deviceLabel(D[k]), borderColor: PALETTE[j % PALETTE.length], backgroundColor: PALETTE[j % PALETTE.length],
          data: sized.map((p) => { const b = p.best.find((x) => x.device === k); return b ? { x: p.size, y: b.ms } : null; })
            .filter((pt) => pt).sort((a, b) => a.x - b.x) })) },
        options: { scales: { x: logAxis("problem size (elements)"), y: logAxis("best time (ms)") },
                   plugins: { title: { display: true, text: family.name + ": best time per problem size" } } },
      });
    } else if (family.problems.length === 1 && family.problems[0].best.length >= 2) {
      // One problem on several devices: a bar per device.
      const p = family.problems[0];
      const box = chartBox(chartHost, "chart-family-" + f);
      box.parentNode.style.height = Math.max(140, 50 + 30 * p.best.length) + "px";
      chart(box, {
        type: "bar",
        data: { labels: p.best.map((b) => deviceLabel(D[b.device])),
                datasets: [{ label: "best time (ms)", data: p.best.map((b) => b.ms), backgroundColor: p.best.map((_, j) => PALETTE[j % PALETTE.length]) }] },
        options: { parsing: true, indexAxis: "y", scales: { x: { ...linAxis("best time (ms)"), min: 0 } },
                   plugins: { legend: { display: false }, title: { display: true, text: family.name + ", " + p.key + ": best time per device" } } },
      });
    }

    if (family.baselines.length) {
      section.appendChild(el("h3", "Against the library baselines (bench/)"));
      const bestNow = (problem, device) => {
        const p = family.problems.find((x) => x.key === problem);
        const b = p && p.best.find((x) => x.device === device);
        return b ? b.ms : null;
      };
      // In the order of the problems above (by size), then of the devices.
      const at = new Map(family.problems.map((p, k) => [p.key, k]));
      const order = (b) => (at.has(b.problem) ? at.get(b.problem) : Infinity);
      const baselines = family.baselines.slice().sort((x, y) => order(x) - order(y) || x.device - y.device);
      fillTable(section.appendChild(el("div", null, "scroll")).appendChild(el("table", null, "grid")),
        ["problem", "device", "library", "library ms", "cutune ms (bench)", "speed-up", "best tuned now (ms)", "measured"],
        baselines.map((b) => [b.problem, deviceLabel(D[b.device]), b.library, fmt(b.library_ms), fmt(b.cutune_ms),
          b.cutune_ms ? ratioText(b.library_ms / b.cutune_ms) : "–", fmt(bestNow(b.problem, b.device)), b.measured_at]),
        [false, false, false, true, true, true, true, false]);
    }
  });
  if (data.families.length === 0) host.appendChild(el("p", "no results", "empty"));
  byId("footer").textContent = "Generated by cutune from its results database. Times are as each run measured them: " +
    "cutune's own measurements and imported files differ in method, and each report says how its runs were measured.";
  finishRendering();
})();
