// Opens every cutune report in a folder with Debian's headless Chromium and checks what a reader
// would notice: console errors, network requests (there must be none: the page is self-contained),
// charts that did not draw, and load time. Keeps a full-page screenshot of each report.
//
//   node check_report.mjs REPORT_FOLDER SCREENSHOT_FOLDER [--max-load-ms N]
// Exit status 0 when every report passes, 1 otherwise, 77 when Chromium is missing.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [folder, shots, ...rest] = process.argv.slice(2);
const maxLoadIndex = rest.indexOf("--max-load-ms");
const maxLoadMs = maxLoadIndex >= 0 ? Number(rest[maxLoadIndex + 1]) : 2000;
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(executablePath)) {
  console.log(`SKIPPED: no Chromium at ${executablePath}`);
  process.exit(77);
}
const reports = fs.readdirSync(folder).filter((f) => f.endsWith(".html")).sort();
if (reports.length === 0) {
  console.error(`no .html reports in ${folder}`);
  process.exit(1);
}
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
let passed = 0, failed = 0;
for (const file of reports) {
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
    await page.waitForSelector("body[data-rendered=true]", { timeout: 10000 });
  } catch {
    problems.push("the page script never finished rendering");
  }
  // The page's own clock, from navigation start to the last chart drawn; the harness's wall
  // time also counts Playwright's round trips, which a reader opening the file does not see.
  const wallMs = Date.now() - started;
  const loadMs = Number(await page.evaluate(() => document.body.getAttribute("data-render-ms"))) || wallMs;
  if (loadMs > maxLoadMs) problems.push(`opened in ${loadMs} ms (harness wall time ${wallMs} ms), over ${maxLoadMs} ms`);

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
  if (canvases.length === 0) problems.push("no charts on the page");
  canvases.filter((c) => !c.drawn).forEach((c) => problems.push(`chart ${c.id} is empty`));
  const injected = await page.evaluate(() => document.querySelectorAll("img").length);
  if (injected) problems.push(`${injected} <img> element(s) on the page: a database string was not escaped`);

  const size = fs.statSync(path.resolve(folder, file)).size;
  if (size > 5e6) problems.push(`${(size / 1e6).toFixed(2)} MB, over the 5 MB limit`);
  await page.screenshot({ path: path.join(shots, file.replace(/\.html$/, ".png")), fullPage: true });
  await page.close();
  if (problems.length) {
    failed++;
    console.log(`FAIL ${file} (${loadMs} ms, ${(size / 1e6).toFixed(2)} MB, ${canvases.length} charts)`);
    problems.forEach((p) => console.log(`  - ${p}`));
  } else {
    passed++;
    console.log(`ok   ${file} (${loadMs} ms, ${(size / 1e6).toFixed(2)} MB, ${canvases.length} charts)`);
  }
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
