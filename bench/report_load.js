// report_load.js - how long a `memtrace report` page takes to open in
// headless Chromium (Debian's /usr/bin/chromium driven by the playwright-core
// of tests/report): for each run, a fresh browser context (empty cache),
// then the time from page.goto() to the page's drawn state: the page's
// script has set body[data-drawn] (info, chart, flame graph and the sites
// table's first screen drawn; older pages: body[data-ms]) and the browser
// has painted a frame after that (two requestAnimationFrame callbacks);
// and to its complete state (body[data-complete]: every data block
// unpacked, the whole table built). Prints every run and the median, min
// and max, plus the page's own figures (data-ms: its script's time to the
// drawn state; data-parse-ms: when the main data block was unpacked;
// data-steps: the time of each drawing step) and the size of the file.
//   node bench/report_load.js PAGE.html [RUNS (default 5)]
// Needs `npm ci --prefix tests/report` (scripts/install-deps.sh does it).
'use strict';
const path = require('path');
const fs = require('fs');
const {chromium} = require(path.join(__dirname, '..', 'tests', 'report', 'node_modules',
                                     'playwright-core'));

const [page_, runsArg] = process.argv.slice(2);
if (!page_) {
  console.error('usage: node bench/report_load.js PAGE.html [RUNS]');
  process.exit(2);
}
const runs = Math.max(1, +(runsArg || 5));
const url = 'file://' + path.resolve(page_);
const median = (a) => { const s = [...a].sort((x, y) => x - y), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--no-first-run', '--disable-component-update', '--disable-sync']});
  const open = [], script = [], parse = [], complete = [];
  let errors = 0;
  for (let i = 0; i < runs; i++) {
    const ctx = await browser.newContext({viewport: {width: 1280, height: 1000}});
    const page = await ctx.newPage();
    page.on('pageerror', (e) => { errors++; console.error('page error: ' + e); });
    const t0 = Date.now();
    await page.goto(url, {waitUntil: 'commit'});
    await page.waitForFunction(() => document.body && (document.body.dataset.drawn || document.body.dataset.ms),
                               null, {timeout: 60000, polling: 'raf'});
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const ms = Date.now() - t0;
    await page.waitForFunction(() => document.body.dataset.complete || document.body.dataset.ms,
                               null, {timeout: 60000});
    const full = Date.now() - t0;
    complete.push(full);
    const own = await page.evaluate(() => ({ms: +document.body.dataset.ms,
                                            parse: +(document.body.dataset.parseMs || NaN),
                                            steps: document.body.dataset.steps || ''}));
    open.push(ms); script.push(own.ms); parse.push(own.parse);
    console.log(`run ${i + 1}: opened in ${ms} ms, complete in ${full} ms (page script ${own.ms} ms, data unpacked ${own.parse} ms after it started; ${own.steps})`);
    await ctx.close();
  }
  await browser.close();
  const mb = (fs.statSync(page_).size / 1e6).toFixed(2);
  console.log(`${page_}: ${mb} MB; open median ${median(open)} ms (min ${Math.min(...open)}, ` +
              `max ${Math.max(...open)}) over ${runs} runs; complete median ${median(complete)} ms ` +
              `(min ${Math.min(...complete)}, max ${Math.max(...complete)}); page script median ` +
              `${median(script)} ms; data unpacked median ${median(parse)} ms`);
  console.log(`RESULT open_ms_median ${median(open)} min ${Math.min(...open)} max ${Math.max(...open)} ` +
              `complete_ms_median ${median(complete)} script_ms_median ${median(script)} page_mb ${mb}`);
  process.exit(errors ? 1 : 0);
})();
