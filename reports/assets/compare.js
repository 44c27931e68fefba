// cutune comparison page: two runs or two devices, the problems both measured side by side
// (reports/report.cpp, collect_comparison()).
(function () {
  const data = readData();
  document.body.setAttribute("data-kind", "compare");
  const [A, B] = data.sides;
  const nameOf = (s) => (s.kind === "run" ? s.name + " (" + deviceName(s.device) + ")" : deviceLabel(s.device));
  byId("title").textContent = "cutune · " + A.name + " vs " + B.name;
  const shared = data.families.reduce((s, f) => s + f.problems.length, 0);
  byId("subtitle").textContent = "A: " + nameOf(A) + " · B: " + nameOf(B) + " · " + shared + " problem(s) in common" +
    (data.family_filter ? " · family " + data.family_filter : "");

  // ---- the two sides ---------------------------------------------------------------------------
  const sourcesOf = (s) => [...new Set(s.runs.map((r) => r.provenance.label))];
  fillTable(byId("sides-table"),
    ["side", "what", "device", "UUID", "compute capability", "copy bandwidth", "runs", "results", "measured"],
    [["A", A], ["B", B]].map(([label, s]) => [label, s.kind === "run" ? s.name + " (" + s.runs.map((r) => r.family).join(", ") + ")" : "every run on the device",
      deviceName(s.device), s.device.known_by_name_only ? "none: known by name only" : s.device.uuid, known(s.device.compute_capability),
      missing(s.device.copy_bandwidth_gbs) ? "not measured" : fmt(s.device.copy_bandwidth_gbs, 4) + " GB/s",
      s.runs.map((r) => r.id).join(", "), count(s.results), sourcesOf(s).join("; ")]),
    [false, false, false, false, false, true, false, true, false]);
  byId("provenance-a-title").textContent = "A: how " + A.name + " was measured";
  byId("provenance-b-title").textContent = "B: how " + B.name + " was measured";
  provenanceBlock(byId("provenance-a"), A.runs);
  provenanceBlock(byId("provenance-b"), B.runs);
  const methods = (s) => new Set(s.runs.map((r) => r.provenance.source));
  const ma = methods(A), mb = methods(B);
  if ([...ma].some((m) => !mb.has(m)) || [...mb].some((m) => !ma.has(m))) {
    const p = byId("method-warning");
    p.hidden = false;
    p.textContent = "A and B were measured in different ways (" + [...ma].join(", ") + " against " + [...mb].join(", ") +
      "): their times are not strictly comparable. See how each was measured below.";
  }

  // ---- per family: problems side by side -------------------------------------------------------
  const valueText = (v) => (v === undefined ? "–" : typeof v === "string" ? v : JSON.stringify(v));
  function changes(a, b) {
    const names = [...new Set(Object.keys(a).concat(Object.keys(b)))];
    return names.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).map((k) => k + ": " + valueText(a[k]) + " → " + valueText(b[k]));
  }
  const host = byId("families");
  data.families.forEach((family, f) => {
    const section = host.appendChild(el("section", null, "family"));
    section.appendChild(el("h2", family.name));
    const both = family.problems.filter((p) => !missing(p.a.ms) && !missing(p.b.ms));
    const mean = geomean(both.map((p) => p.a.ms / p.b.ms));
    section.appendChild(el("p", both.length
      ? "Over " + both.length + " problem(s) both solved, B's best is " + (mean >= 1 ? ratioText(mean) + " faster" : ratioText(1 / mean) + " slower") +
        " than A's (geometric mean of A time / B time). \"Kept config\": each side's best config as the other side measured it, " +
        "against that side's best — what keeping the other side's choice would cost."
      : "No problem has a successful config on both sides.", "hint"));
    // A side's best: its time and metrics, its config below.
    const bestCell = (b) => {
      if (missing(b.ms)) return el("span", "no successful config (" + count(b.results) + " results)", "empty");
      const cell = el("div", null, "best");
      cell.appendChild(el("strong", fmt(b.ms) + " ms"));
      const metrics = [];
      if (!missing(b.copy)) metrics.push("copy " + pct(b.copy));
      if (!missing(b.gbs)) metrics.push(fmt(b.gbs) + " GB/s");
      if (!missing(b.gflops)) metrics.push(fmt(b.gflops) + " GFLOP/s");
      metrics.push(count(b.ok) + " ok of " + count(b.results));
      cell.appendChild(el("div", metrics.join(" · "), "metrics"));
      cell.appendChild(configNode(b.config, "div"));
      return cell;
    };
    const rows = family.problems.map((p) => {
      const ratio = !missing(p.a.ms) && !missing(p.b.ms) ? p.a.ms / p.b.ms : NaN;
      const diff = p.a.config && p.b.config ? changes(p.a.values, p.b.values) : [];
      const changed = !p.a.config || !p.b.config ? el("span", "–", "empty")
        : p.a.config === p.b.config ? el("span", "same config", "same") : el("span", diff.length ? diff.join("; ") : "configs differ", "changed");
      const kept = el("div", null, "kept");
      const keptLine = (label, ms, best) => kept.appendChild(el("div", label + ": " +
        (missing(best) ? "–" : missing(ms) ? "not measured" : fmt(ms) + " ms, " + ratioText(ms / best) + " its best")));
      if (p.a.config !== p.b.config) {
        keptLine("A's on B", p.a_config_on_b, p.b.ms);
        keptLine("B's on A", p.b_config_on_a, p.a.ms);
      } else kept.appendChild(el("span", "–", "empty"));
      return [p.key, bestCell(p.a), bestCell(p.b),
        missing(ratio) ? "–" : ratio >= 1 ? "B " + ratioText(ratio) + " faster" : "B " + ratioText(1 / ratio) + " slower",
        changed, kept];
    });
    fillTable(section.appendChild(el("div", null, "scroll")).appendChild(el("table", null, "grid side-by-side")),
      ["problem", "A: " + A.name, "B: " + B.name, "B vs A", "changed parameters", "kept config"],
      rows, [false, false, false, true, false, false], [null, null, null, "nowrap", null, null]);

    const charts_ = section.appendChild(el("div", null, "charts"));
    if (both.length) {
      const canvas = chartBox(charts_, "chart-ratio-" + f);
      chart(canvas, {
        type: "bar",
        // Bars grow from 1: up where B is faster, down where it is slower.
        data: { labels: both.map((p) => p.key), datasets: [{ label: "A time / B time", data: both.map((p) => p.a.ms / p.b.ms), base: 1,
                backgroundColor: both.map((p) => (p.a.ms >= p.b.ms ? PALETTE[2] : PALETTE[4])) }] },
        options: { parsing: true, scales: { y: { ...logAxis("A time / B time (above 1: B faster)"), suggestedMin: 1, suggestedMax: 1 },
                                            x: { ticks: { autoSkip: true } } },
                   plugins: { legend: { display: false }, title: { display: true, text: "speed of B relative to A, per problem" } } },
      });
    }
    const sized = family.problems.filter((p) => p.size > 0);
    if (spansTwo(sized.map((p) => ({ x: p.size })))) {
      const line = (side, colour, label) => ({ label, borderColor: colour, backgroundColor: colour,
        data: sized.filter((p) => !missing(p[side].ms)).map((p) => ({ x: p.size, y: p[side].ms })).sort((a, b) => a.x - b.x) });
      chart(chartBox(charts_, "chart-sizes-" + f), {
        type: "line",
        data: { datasets: [line("a", PALETTE[0], "A: " + A.name), line("b", PALETTE[1], "B: " + B.name)] },
        options: { scales: { x: logAxis("problem size (elements)"), y: logAxis("best time (ms)") },
                   plugins: { title: { display: true, text: "best time per problem size" } } },
      });
    }
  });

  const only = data.only_a.map((p) => ["A only", p.family, p.key, count(p.results)])
    .concat(data.only_b.map((p) => ["B only", p.family, p.key, count(p.results)]));
  if (only.length) {
    byId("only-section").hidden = false;
    fillTable(byId("only-table"), ["side", "family", "problem", "results"], only, [false, false, false, true]);
  }
  byId("footer").textContent = "Generated by cutune from its results database. Each side's times are as its runs measured " +
    "them; \"how … was measured\" above says how.";
  finishRendering();
})();
