// Opens every cutune page in a folder (reports, the index, comparisons) with Debian's headless
// Chromium and checks what a reader would notice: console errors, network requests (there must be
// none: each page is self-contained), charts that did not draw, injected markup, size and load
// time; on the index, links that lead nowhere; on reports, the results table's filter, sort and
// pages, devices shown with zeros instead of "unknown", the energy and resource sections (a chart
// or a line saying why there is none), the throttling warning, and one result in full. Keeps a
// full-page screenshot of each.
//
//   node check_report.mjs FOLDER SCREENSHOT_FOLDER [--max-load-ms N] [--max-mb N] [--min-results N]
//        [--expect-anomaly PREFIX] [--expect-unknown-device PREFIX]
//        [--energy-report PREFIX --energy-problem KEY --pareto-front N --no-energy-problem KEY]
// --min-results: some report holds at least N results. --expect-anomaly: reports whose file name
// starts with PREFIX must show a source-anomaly warning. --expect-unknown-device: such reports
// must show "unknown" device fields. --energy-report: in such reports, problem --energy-problem
// must chart energy against time with a Pareto front of exactly --pareto-front configs, problem
// --no-energy-problem must say that energy was not measured, and the throttling warning must show;
// screenshots of both problems' energy and resource sections are kept beside the page's.
// Exit status 0 when every page passes, 1 otherwise, 77 when Chromium is missing.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [folder, shots, ...rest] = process.argv.slice(2);
const option = (name, fallback) => { const k = rest.indexOf(name); return k >= 0 ? rest[k + 1] : fallback; };
const maxLoadMs = Number(option("--max-load-ms", 2000));
const maxMb = Number(option("--max-mb", 5));
const minResults = Number(option("--min-results", 0));
const expectAnomaly = option("--expect-anomaly", null);
const expectUnknown = option("--expect-unknown-device", null);
const energyReport = option("--energy-report", null);
const energyProblem = option("--energy-problem", null);
const paretoFront = Number(option("--pareto-front", NaN));
const noEnergyProblem = option("--no-energy-problem", null);
if (energyReport && (!energyProblem || !noEnergyProblem || !(paretoFront > 0))) {
  console.error("--energy-report needs --energy-problem, --pareto-front and --no-energy-problem");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(executablePath)) {
  console.log(`SKIPPED: no Chromium at ${executablePath}`);
  process.exit(77);
}
const pages = fs.readdirSync(folder).filter((f) => f.endsWith(".html")).sort();
if (pages.length === 0) {
  console.error(`no .html pages in ${folder}`);
  process.exit(1);
}
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
let passed = 0, failed = 0, largest = 0;
const kinds = {};
for (const file of pages) {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const url = pathToFileURL(path.resolve(folder, file)).href;
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", (d) => { problems.push(`a dialog opened (script injection?): ${d.message()}`); d.dismiss(); });
  page.on("request", (r) => { if (r.url() !== url) problems.push(`network request: ${r.url()}`); });

  const started = Date.now();
  await page.goto(url, { waitUntil: "load" });
  try {
    await page.waitForSelector("body[data-rendered=true]", { timeout: 20000 });
  } catch {
    problems.push("the page script never finished rendering");
  }
  // The page's own clock, from navigation start to the last chart drawn; the harness's wall
  // time also counts Playwright's round trips, which a reader opening the file does not see.
  const wallMs = Date.now() - started;
  const loadMs = Number(await page.evaluate(() => document.body.getAttribute("data-render-ms"))) || wallMs;
  if (loadMs > maxLoadMs) problems.push(`opened in ${loadMs} ms (harness wall time ${wallMs} ms), over ${maxLoadMs} ms`);
  const kind = await page.evaluate(() => document.body.getAttribute("data-kind"));
  kinds[kind] = (kinds[kind] || 0) + 1;

  // A chart rendered when its canvas has a size and at least some non-transparent pixels.
  const canvases = await page.evaluate(() =>
    [...document.querySelectorAll("canvas")].map((c) => {
      const box = c.getBoundingClientRect();
      if (!c.width || !c.height || !box.width || !box.height) return { id: c.id, drawn: false };
      const pixels = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) ink++;
      return { id: c.id, drawn: ink > 50 };
    }));
  if (canvases.length === 0 && kind !== "index") problems.push("no charts on the page");
  canvases.filter((c) => !c.drawn).forEach((c) => problems.push(`chart ${c.id} is empty`));
  const injected = await page.evaluate(() => document.querySelectorAll("img").length);
  if (injected) problems.push(`${injected} <img> element(s) on the page: a database string was not escaped`);

  // Zeros where a device is not known: "cc 0.0", "0 MHz × 0 bit", "driver / NVRTC 0 /".
  const text = await page.evaluate(() => document.body.innerText);
  for (const zero of [/cc 0\.0/, /\b0 MHz/, /\b0 bit/, /driver \/ NVRTC\s+0\b/, /compute capability\s+0\.0/])
    if (zero.test(text)) problems.push(`the page shows a zero for an unknown device field (${zero})`);
  if (expectUnknown && file.startsWith(expectUnknown) && kind === "report" && !/\bunknown\b/.test(text))
    problems.push("a device known by name only, but no field says unknown");
  if (expectAnomaly && file.startsWith(expectAnomaly)) {
    const shown = await page.evaluate(() => { const w = document.getElementById("anomaly-warning"); return !!w && !w.hidden; });
    if (!shown) problems.push("a source anomaly (time outside min–max) is not flagged");
  }
  // The footer may claim cutune's method only where every run is cutune's.
  if (kind === "report") {
    const foreign = await page.evaluate(() => document.querySelectorAll(".method.source-kernel_tuner, .method.source-t4").length);
    const footer = await page.evaluate(() => document.getElementById("footer").textContent);
    if (foreign && /L2 flushed/.test(footer)) problems.push("the footer claims cutune's measurement for imported runs");
  }

  let results = 0;
  // Every link leads to a page in the folder: the index to each report, a report back to the index.
  const links = await page.evaluate(() => [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")));
  if (kind === "index" && links.length === 0) problems.push("the index links no report");
  links.filter((l) => !/^[\w.-]+\.html$/.test(l) || !fs.existsSync(path.resolve(folder, l)))
    .forEach((l) => problems.push(`the page links ${l}, which is not a page in the folder`));
  if (kind === "report") try {
    // The results table: every result reachable through filter and pages.
    results = await page.evaluate(() => JSON.parse(document.getElementById("report-data").textContent).results.count);
    const table = async () => page.evaluate(() => ({
      matching: Number(document.getElementById("results-table").getAttribute("data-matching")),
      rows: document.querySelectorAll("#results-table tbody tr").length,
      info: document.getElementById("page-info").textContent,
    }));
    await page.selectOption("#filter-problem", "all");
    await page.selectOption("#filter-status", "all");
    const all = await table();
    if (all.matching !== results) problems.push(`the results table offers ${all.matching} of ${results} results`);
    if (all.rows > 500) problems.push(`the results table drew ${all.rows} rows at once`);
    const firstTerm = await page.evaluate(() => {
      const cell = document.querySelector("#results-table tbody td.config");
      return cell ? cell.textContent.split(",")[0] : "";
    });
    if (firstTerm) {
      await page.fill("#filter-text", firstTerm);
      await page.waitForTimeout(300);
      const narrowed = await table();
      if (!(narrowed.matching >= 1 && narrowed.matching <= all.matching)) problems.push(`filtering by "${firstTerm}" left ${narrowed.matching} rows`);
      await page.fill("#filter-text", "");
      await page.waitForTimeout(300);
    }
    if (all.matching > 100) {
      await page.click("#page-last", { timeout: 5000 });
      const last = await table();
      if (!(last.rows >= 1 && last.rows <= 100)) problems.push(`the last page shows ${last.rows} rows`);
      await page.click("#page-first", { timeout: 5000 });
    }
    // Sorting by time, and the table's own state, must not throw (page errors are caught above).
    await page.click("#results-table th:nth-child(5)", { timeout: 5000 });
    await page.click("#results-table th:nth-child(5)", { timeout: 5000 });
    // The heat map, where two parameters vary: cells with times.
    const heat = await page.evaluate(() => document.querySelectorAll("table.heatmap td[data-ms]").length);
    const shouldHeat = await page.evaluate(() => !!document.querySelector("#interaction h3"));
    if (shouldHeat && heat === 0) problems.push("the interaction heat map has no cells");
  } catch (e) {
    problems.push(`the results table did not respond: ${e.message.split("\n")[0]}`);
  }

  if (kind === "report") try {
    problems.push(...await observationProblems(page));
    if (energyReport && file.startsWith(energyReport))
      problems.push(...await energyReportProblems(page, path.join(shots, file.replace(/\.html$/, ""))));
  } catch (e) {
    problems.push(`the energy and resource sections did not respond: ${e.message.split("\n")[0]}`);
  }

  const size = fs.statSync(path.resolve(folder, file)).size;
  largest = Math.max(largest, results);
  if (size > maxMb * 1e6) problems.push(`${(size / 1e6).toFixed(2)} MB, over the ${maxMb} MB limit`);
  await page.screenshot({ path: path.join(shots, file.replace(/\.html$/, ".png")), fullPage: true });
  await page.close();
  const line = `${file} [${kind}] (${loadMs} ms, ${(size / 1e6).toFixed(2)} MB, ${canvases.length} charts${results ? ", " + results + " results" : ""})`;
  if (problems.length) {
    failed++;
    console.log(`FAIL ${line}`);
    problems.forEach((p) => console.log(`  - ${p}`));
  } else {
    passed++;
    console.log(`ok   ${line}`);
  }
}
await browser.close();
if (energyReport && !pages.some((f) => f.startsWith(energyReport))) {
  failed++;
  console.log(`FAIL no report's file name starts with ${energyReport}`);
}
if (largest < minResults) {
  failed++;
  console.log(`FAIL no report holds ${minResults} results (the largest: ${largest})`);
}
console.log(`${passed} passed, ${failed} failed; pages: ${JSON.stringify(kinds)}`);
process.exit(failed ? 1 : 0);

// What the energy and resource sections, the throttling warning and the result in full show for
// the problem selected now, checked against the page's own data: a chart where some result has the
// observation, else a line saying why not; never an empty section.
async function observationProblems(page) {
  return page.evaluate(() => {
    const found = [];
    const data = JSON.parse(document.getElementById("report-data").textContent);
    const problem = Number(document.getElementById("problem-select").value);
    const energyChart = document.getElementById("chart-energy");
    const energyHint = document.getElementById("energy-hint").textContent;
    if (energyChart) {
      const chart = Chart.getChart(energyChart);
      if (!chart || chart.data.datasets.length < 1 || chart.data.datasets[0].data.length < 1)
        found.push("the energy chart has no Pareto front");
      const rows = document.querySelectorAll("#pareto-table tbody tr").length;
      if (chart && rows !== chart.data.datasets[0].data.length)
        found.push(`the Pareto table has ${rows} rows, the chart's front ${chart.data.datasets[0].data.length} points`);
    } else if (!/not measured/.test(energyHint)) {
      found.push(`no energy chart, and the line instead says "${energyHint}"`);
    }
    if (!data.results.energy_j && energyChart) found.push("an energy chart in a report without energy");
    const resourceCharts = [...document.querySelectorAll("#resources canvas")];
    const resourcesHint = document.getElementById("resources-hint").textContent;
    if (resourceCharts.length === 0 && !/not recorded/.test(resourcesHint))
      found.push(`no register or occupancy chart, and the line instead says "${resourcesHint}"`);
    resourceCharts.filter((c) => !Chart.getChart(c)).forEach((c) => found.push(`${c.id} is no chart`));
    if (resourceCharts.length && !/spilled/.test(resourcesHint) && data.results.spill_store_bytes)
      found.push("resources are charted but the line does not say how many results spilled");
    const warning = document.getElementById("throttle-warning");
    const throttled = data.throttled > 0 || data.remeasured > 0;
    if (throttled === warning.hidden) found.push(`throttled ${data.throttled}, remeasured ${data.remeasured}, but the warning is ${warning.hidden ? "hidden" : "shown"}`);
    if (data.problems.length && problem >= 0) {
      const detail = document.getElementById("result-detail").innerText;
      for (const field of ["registers per thread", "theoretical occupancy", "energy per run", "SM clock while timing", "compile warnings"])
        if (!detail.includes(field)) found.push(`the result in full does not show ${field}`);
      if (!data.results.registers && !/registers per thread\s+unknown/.test(detail))
        found.push("no result has registers, but the result in full does not say unknown");
    }
    return found;
  });
}

async function selectProblem(page, key) {
  const value = await page.evaluate((k) => {
    const option = [...document.querySelectorAll("#problem-select option")].find((o) => o.textContent === k);
    return option ? option.value : null;
  }, key);
  if (value === null) return false;
  await page.selectOption("#problem-select", value);
  await page.waitForTimeout(200);
  return true;
}

// The energy and resource sections from their heading to the end of the resource charts.
async function sectionScreenshot(page, file) {
  const box = await page.evaluate(() => {
    const top = document.getElementById("energy-hint").previousElementSibling.getBoundingClientRect();
    const bottom = document.getElementById("resources").getBoundingClientRect();
    return { y: top.top + window.scrollY - 8, height: bottom.bottom - top.top + 16 };
  });
  await page.screenshot({ path: file, fullPage: true, clip: { x: 0, y: box.y, width: 1400, height: box.height } });
}

// The fixture's problem with energy has a Pareto front of a known size; its problem without says so.
async function energyReportProblems(page, shot) {
  const found = [];
  if (!(await selectProblem(page, noEnergyProblem))) return [`no problem ${noEnergyProblem} to select`];
  const without = await page.evaluate(() => ({
    chart: !!document.getElementById("chart-energy"),
    hint: document.getElementById("energy-hint").textContent,
    resources: document.querySelectorAll("#resources canvas").length,
  }));
  if (without.chart) found.push(`${noEnergyProblem} has no energy, yet an energy chart is drawn`);
  if (!/energy was not measured/i.test(without.hint)) found.push(`${noEnergyProblem}: the energy line says "${without.hint}"`);
  if (without.resources !== 2) found.push(`${noEnergyProblem}: ${without.resources} register/occupancy charts, not 2`);
  found.push(...await observationProblems(page));
  await sectionScreenshot(page, shot + "-no-energy.png");

  if (!(await selectProblem(page, energyProblem))) return found.concat([`no problem ${energyProblem} to select`]);
  const withEnergy = await page.evaluate(() => {
    const canvas = document.getElementById("chart-energy");
    const chart = canvas && Chart.getChart(canvas);
    return {
      front: chart ? chart.data.datasets[0].data.length : -1,
      rows: document.querySelectorAll("#pareto-table tbody tr").length,
      throttled: !document.getElementById("throttle-warning").hidden,
      detail: document.getElementById("result-detail").innerText,
    };
  });
  if (withEnergy.front !== paretoFront) found.push(`the energy chart's Pareto front has ${withEnergy.front} points, not ${paretoFront}`);
  if (withEnergy.rows !== paretoFront) found.push(`the Pareto table has ${withEnergy.rows} rows, not ${paretoFront}`);
  if (!withEnergy.throttled) found.push("throttled results, but no throttling warning");
  if (!/energy per run\s+[\d.]+ [mµn]?J/.test(withEnergy.detail)) found.push("the best result in full shows no energy");
  found.push(...await observationProblems(page));
  // A click on a row shows that result in full: the fixture's throttled and remeasured config.
  await page.fill("#filter-text", "pad=2");
  await page.waitForTimeout(300);
  await page.click("#results-table tbody tr:first-child", { timeout: 5000 });
  const clicked = await page.evaluate(() => document.getElementById("result-detail").innerText);
  if (!/throttled samples\s+1 \(sw_power_cap\)/.test(clicked) || !/remeasured\s+yes/.test(clicked))
    found.push("a click on the throttled, remeasured result does not show it in full");
  await page.fill("#filter-text", "");
  await page.waitForTimeout(300);
  await sectionScreenshot(page, shot + "-energy.png");
  return found;
}
