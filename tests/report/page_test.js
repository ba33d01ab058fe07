// page_test.js - the report page's behaviour in headless Chromium beyond its
// numbers (report_test.js checks those): the hover tooltip stays in the
// window, a drag on the chart that ends outside it still selects (up to the
// end past its right edge), live has a scale of its own, the peak's label
// stays in the plot and off the legend and axes, flame-graph labels fit
// their frames, a table cut short says so and shows all on request, a
// window's table says which columns follow it, long trace info wraps and a
// long context folds, the search ignores case, a browser without
// DecompressionStream gets a message, a trace with no allocations a note, a
// page that gets no animation frames still completes, one that arrives
// slowly waits for its later blocks, and the Content-Security-Policy allows
// what the page does and nothing else.
// Screenshots page-NAME.png go to OUTDIR.
//   node page_test.js CLI CORPUS_DIR OUTDIR
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const {execFileSync} = require('child_process');
const {chromium} = require(path.join(__dirname, 'node_modules', 'playwright-core'));

const [cli, corpus, outdir] = process.argv.slice(2);
let fails = 0;
function fail(msg) { console.log('FAIL ' + msg); fails++; }
function ok(msg) { console.log('ok   ' + msg); }
function check(cond, good, bad) { if (cond) ok(good); else fail(bad); }
const trace = (name) => path.join(corpus, name);

// NAME.html of TRACE (with extra report OPTIONS) open in a fresh page, its
// console errors and CSP violations collected; INIT runs before the page's script
async function open(browser, name, tr, {options = [], init = null, wait = 'body[data-complete]'} = {}) {
  const html = path.join(outdir, 'page-' + name + '.html');
  execFileSync(cli, ['report', ...options, tr, '-o', html]);
  const page = await browser.newPage({viewport: {width: 1280, height: 1000}});
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) page.errors.push('network request ' + r.url()); });
  await page.addInitScript(() => { window.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective)); });
  if (init) await page.addInitScript(init);
  await page.bringToFront();
  await page.goto('file://' + path.resolve(html));
  try {
    await page.waitForSelector(wait, {timeout: 60000});
  } catch (e) {   // (say how far the page got)
    const state = await page.evaluate(() => JSON.stringify(document.body.dataset)).catch(() => '?');
    throw new Error(`${e.message.split('\n')[0]}; body's data: ${state}; errors: ${JSON.stringify(page.errors)}`);
  }
  return page;
}
async function close(page, name) {
  const csp = await page.evaluate(() => window.cspViolations);
  check(!page.errors.length && !csp.length, `${name}: no console errors, no CSP violations`,
        `${name}: console errors ${JSON.stringify(page.errors)}, CSP violations ${JSON.stringify(csp)}`);
  await page.evaluate(() => hideTip());
  await page.screenshot({path: path.join(outdir, 'page-' + name + '.png'), fullPage: true});
  await page.close();
}
// the rectangle of an element (or an SVG element's bounding box) in page pixels
const rectOf = (page, sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect();
  return {x: r.left, y: r.top, w: r.width, h: r.height}; });
const inside = (a, b) => a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.w <= b.x + b.w + 0.5 && a.y + a.h <= b.y + b.h + 0.5;
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

// the tooltip over the right quarter of the flame graph (the root frame
// spans it all) is inside the window, and as wide as where it has room
// (not squeezed against the window's edge)
async function tooltip(page, name) {
  const root = await page.evaluate(() => { document.getElementById('flamebox').scrollIntoView({block: 'start'});
    const f = flameFrames().find((f) => f.node === 0), box = document.getElementById('flamebox');
    box.scrollTop = box.scrollHeight; return f; });
  const cv = await rectOf(page, '#flame'), top = await page.evaluate(() => shown.top);
  const vw = await page.evaluate(() => document.documentElement.clientWidth);
  const vh = await page.evaluate(() => document.documentElement.clientHeight);
  let width = null;
  for (const fx of [0.3, 0.8, 0.95, 0.999]) {
    const x = Math.min(cv.x + root.x + root.w * fx, vw - 1), y = cv.y + root.y - top + root.h / 2;
    await page.mouse.move(x, y);
    const tip = await rectOf(page, '#tip'), text = await page.textContent('#tip');
    if (width === null) width = tip.w;
    check(text.startsWith('all') && inside(tip, {x: 0, y: 0, w: vw, h: vh}) && Math.abs(tip.w - width) < 1,
          `${name}: tooltip at ${Math.round(x)},${Math.round(y)} inside the ${vw}x${vh} window, ${Math.round(tip.w)} px wide`,
          `${name}: tooltip '${text}' at ${JSON.stringify(tip)} for the pointer at ${x},${y}: not inside ${vw}x${vh} ` +
          `or not ${width} px wide`);
  }
  await page.mouse.move(1, 1);
}

// a drag from inside the chart to past its right edge selects up to the
// end of the trace; one that ends below the chart selects too; the shaded
// box does not follow the mouse once the button is up
async function dragOutside(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await rectOf(page, '#chart');
  const [cl, cr] = await page.evaluate(() => [CL, CR]), mid = box.x + (cl + cr) / 2;
  await page.mouse.move(mid, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + box.w + 60, box.y + 100, {steps: 4});
  await page.mouse.up();
  const w = await page.evaluate(() => ({win, end: D.end_us, text: document.getElementById('win').textContent,
    sel: [+chartSel.getAttribute('x'), +chartSel.getAttribute('width')]}));
  check(w.text && w.win[0] > 0 && w.win[1] > w.end && Math.abs(w.sel[0] + w.sel[1] - cr) < 1,
        `${name}: a drag past the chart's right edge selects up to the end: ${w.text}`,
        `${name}: a drag past the right edge gave '${w.text}' ${JSON.stringify(w)}`);
  await page.mouse.move(box.x + cl + 10, box.y + 60, {steps: 3});
  const after = await page.evaluate(() => [+chartSel.getAttribute('x'), +chartSel.getAttribute('width')]);
  check(after[0] === w.sel[0] && after[1] === w.sel[1], `${name}: the box stays once the drag is over`,
        `${name}: the box moved after the drag: ${JSON.stringify(w.sel)} -> ${JSON.stringify(after)}`);
  await page.mouse.move(box.x + 100, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 300, box.y + box.h + 80, {steps: 4});
  await page.mouse.up();
  const b = await page.evaluate(() => ({win, text: document.getElementById('win').textContent}));
  check(b.text && b.win[0] < b.win[1], `${name}: a drag ending below the chart selects: ${b.text}`,
        `${name}: a drag ending below the chart gave '${b.text}'`);
  await page.mouse.click(box.x + 100, box.y + 100);       // clears
}

// live has a scale of its own: its line spans at least half the height the
// cumulative allocated line spans, with axis labels of its own
async function liveScale(page, name) {
  const spans = await page.$$eval('#chart polyline', (ls) => ls.map((l) => {
    const ys = l.getAttribute('points').split(' ').map((p) => +p.split(',')[1]);
    return Math.max(...ys) - Math.min(...ys); }));
  const labels = await page.$$eval('#chart .axis-live', (ts) => ts.map((t) => t.textContent));
  check(spans.length === 3 && spans[2] >= 0.5 * spans[0] && labels.length >= 2,
        `${name}: the live line spans ${spans[2].toFixed(0)} px against allocated's ${spans[0].toFixed(0)} (live axis ${labels.join(', ')})`,
        `${name}: live line spans ${JSON.stringify(spans)}, live axis ${JSON.stringify(labels)}`);
}

// the peak's label is inside the chart, off the legend and the axis labels,
// for the trace's peak and for a peak moved to the start, middle and end
async function peakLabel(page, name) {
  const res = await page.evaluate(() => {
    const r = (e) => { const b = e.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
    const t0 = D.peak_time_us, out = [];
    for (const t of [t0, 0, D.end_us / 2, D.end_us]) {
      D.peak_time_us = t; drawChart();
      const svg = document.getElementById('chart'), label = svg.querySelector('#peaklabel');
      const others = [...svg.querySelectorAll('text')].filter((e) => e !== label && !e.closest('#peaklabel'));
      out.push({t, label: label && r(label), text: label && label.textContent, svg: r(svg), others: others.map(r)});
    }
    D.peak_time_us = t0; drawChart();
    return out; });
  for (const c of res) {
    const bad = !c.label ? 'missing' : !inside(c.label, c.svg) ? 'outside the chart' :
      c.others.some((o) => overlap(o, c.label)) ? 'over the legend or an axis label' : '';
    check(!bad && c.text.startsWith('peak '), `${name}: peak label at ${c.t} us inside the chart, off legend and axes`,
          `${name}: peak label '${c.text}' at ${c.t} us ${bad}: ${JSON.stringify(c.label)} in ${JSON.stringify(c.svg)}`);
  }
}

// flame-graph labels, with the function names made long and wide: each
// fits its frame (measured in the canvas's font), the cut ones end in "…"
// (every fillText is recorded by the init script labelSpy)
function labelSpy() {
  const fill = CanvasRenderingContext2D.prototype.fillText;
  window.drawnLabels = [];
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, maxWidth) {
    const w = this.measureText(text).width;
    window.drawnLabels.push({text, x, y, w: maxWidth === undefined ? w : Math.min(w, maxWidth)});
    return fill.apply(this, arguments); };
}
async function flameLabels(page, name) {
  const r = await page.evaluate(() => {
    D.strings.forEach((s, i) => { D.strings[i] = 'WM_Wide_' + 'MW'.repeat(i % 7 * 5) + s; });
    window.drawnLabels = []; drawFlame();
    const fr = flameFrames(), bad = [], top = shown.top;
    let cut = 0;
    for (const l of window.drawnLabels) {
      const f = fr.find((f) => f.y - top <= l.y && l.y < f.y - top + f.h && f.x <= l.x && l.x < f.x + f.w);
      const ok = f && l.x + l.w <= f.x + f.w + 0.01 &&
        (l.text === f.name || (l.text.endsWith('\u2026') && f.name.startsWith(l.text.slice(0, -1))));
      if (!ok) bad.push({l, f: f && {x: f.x, w: f.w, name: f.name}});
      if (l.text.endsWith('\u2026')) cut++;
    }
    return {n: window.drawnLabels.length, cut, bad: bad.slice(0, 3)}; });
  check(r.n && r.cut && !r.bad.length, `${name}: ${r.n} flame labels fit their frames (${r.cut} cut with an ellipsis)`,
        `${name}: flame labels: ${r.bad.length ? 'spill: ' + JSON.stringify(r.bad) : r.n + ' drawn, ' + r.cut + ' cut'}`);
}

// the number of sites with a nonzero value (the table's rows unfiltered)
const siteCount = (page) => page.evaluate(() => {
  let n = 0; for (let i = 0; i < D.sites.name.length; i++)
    if (D.sites.alloc[i] + D.sites.peak[i] + D.sites.end[i] > 0) n++; return n; });
const tableRows = (page) => page.$$eval('#sites tr', (r) => r.length - 1);

// a table cut short says how many rows of how many, and shows all on request
async function sitesNote(page, name) {
  const all = await siteCount(page), rows = await tableRows(page), note = await page.textContent('#sitecount');
  if (rows >= all) { fail(`${name}: ${all} sites, all shown: pick a trace with more`); return; }
  check(note.includes(`${rows} of ${all} sites`) && await page.isVisible('#showall'),
        `${name}: the table says '${note}'`, `${name}: ${rows} of ${all} sites shown, the page says '${note}'`);
  await page.click('#showall');
  await page.evaluate(() => rowsDone);
  const after = await tableRows(page);
  check(after === all && !await page.isVisible('#showall'), `${name}: 'show all' shows ${after} sites`,
        `${name}: after 'show all' ${after} of ${all} rows`);
}

// in a time window the headers say which columns follow it (allocated) and
// which are of the whole trace; without one, neither
async function windowHeaders(page, name) {
  const heads = () => page.$$eval('#sites th', (t) => t.map((x) => x.textContent));
  const plain = await heads();
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await rectOf(page, '#chart');
  await page.mouse.move(box.x + 300, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 600, box.y + 100, {steps: 4});
  await page.mouse.up();
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  const inWin = await heads();
  check(/window/.test(inWin[0]) && inWin.slice(1, 4).every((h) => /whole trace/.test(h)),
        `${name}: in a window the headers say ${JSON.stringify(inWin.slice(0, 4))}`,
        `${name}: in a window the headers are ${JSON.stringify(inWin)}`);
  await page.mouse.click(box.x + 100, box.y + 100);
  const cleared = await heads();
  check(plain.concat(cleared).every((h) => !/window|whole trace/.test(h)),
        `${name}: without a window the headers are plain`, `${name}: headers ${JSON.stringify(plain)} / ${JSON.stringify(cleared)}`);
}

// the search ignores case: the top row's site found by its name in upper
// case (and in lower case)
async function search(page, name) {
  const site = await page.textContent('#sites tr:nth-child(2) td.site');
  for (const q of [site.toUpperCase(), site.toLowerCase()]) {
    await page.fill('#q', q);
    const sites = await page.$$eval('#sites td.site', (t) => t.map((x) => x.textContent));
    check(sites.includes(site), `${name}: searching '${q}' finds '${site}'`, `${name}: searching '${q}' gave ${JSON.stringify(sites.slice(0, 3))}`);
  }
  await page.fill('#q', '');
}

// long trace info (synth-info-long: 1012-character executable, 300-character
// host, a 100-line context with tabs): no horizontal scrolling, the chart on
// the first screen, the context folded, its lines all there when opened
async function longInfo(page, name) {
  const m = await page.evaluate(() => ({sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth,
    chart: document.getElementById('chart').getBoundingClientRect().top, vh: window.innerHeight}));
  check(m.sw <= m.cw, `${name}: page ${m.sw} px wide in a ${m.cw} px window`, `${name}: page ${m.sw} px wide in a ${m.cw} px window`);
  check(m.chart < m.vh, `${name}: chart at ${Math.round(m.chart)} px, on the first screen`, `${name}: chart at ${m.chart} px, below the first screen (${m.vh})`);
  const folded = await page.evaluate(() => { const d = document.querySelector('#info details'); return d && !d.open; });
  check(folded, `${name}: the long context is folded`, `${name}: the long context is not folded`);
  if (folded) await page.click('#info summary');
  const ctx = await page.evaluate(() => { const e = [...document.querySelectorAll('#info .ctx')].pop();
    return {want: D.context, text: e && e.textContent, lines: e && e.innerText.split('\n').length, h: e && e.offsetHeight,
            ws: e && getComputedStyle(e).whiteSpace}; });
  const nl = ctx.want.split('\n').length;
  check(ctx.text === ctx.want && ctx.lines >= nl && ctx.ws === 'pre-wrap',
        `${name}: the opened context keeps its ${nl} lines and tabs`,
        `${name}: context shown as ${ctx.lines} lines (white-space ${ctx.ws}), the trace's has ${nl}`);
}

// the info box's rate as printf's %.6g, no padding zeros (ref-example-ocamlopt,
// rate 0.001: "8000", it said "8000.00"); the tab's title names the program
async function infoRate(page, name) {
  const got = await page.evaluate(() => ({rows: [...document.querySelectorAll('#info tr')].map((r) => r.textContent),
    title: document.title, exe: D.executable, pid: D.pid}));
  const rate = got.rows.find((r) => r.startsWith('sample rate')) || '';
  check(rate === 'sample rateone sample per 8000 bytes (rate 0.001)', `${name}: '${rate}'`,
        `${name}: rate row '${rate}'`);
  const want = `memtrace report: ${got.exe.split('/').pop()} [${got.pid}]`;
  check(got.title === want, `${name}: title '${got.title}'`, `${name}: title '${got.title}', wanted '${want}'`);
}

// a trace with no allocations: a note, no chart, flame graph or table
async function empty(page, name) {
  const note = await page.isVisible('#empty') ? await page.textContent('#empty') : '';
  const shown = [];
  for (const s of ['#chart', '#flame', '#sites']) if (await page.isVisible(s)) shown.push(s);
  check(/no allocations in this trace/i.test(note) && !shown.length, `${name}: '${note}' instead of chart, flame graph and table`,
        `${name}: note '${note}', still shown: ${shown.join(' ')}`);
}

// the Content-Security-Policy: a <meta> whose default-src is 'none', that
// blocks a fetch and an image from elsewhere (the page's own drawing raised
// no violation: close() checks that on every page)
async function csp(page, name) {
  const meta = await page.evaluate(() => { const m = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
    return m && m.content; });
  check(meta && /default-src 'none'/.test(meta), `${name}: CSP ${meta}`, `${name}: no CSP meta (${meta})`);
  const blocked = await page.evaluate(async () => {
    window.cspViolations = [];
    const fetched = await fetch('https://example.invalid/x').then(() => 'fetched', () => 'refused');
    const img = new Image(); img.src = 'https://example.invalid/x.png'; document.body.appendChild(img);
    // (the image's violation is reported later: up to 10 s for both)
    for (let i = 0; i < 200 && !(window.cspViolations.some((d) => /connect-src/.test(d)) &&
                                 window.cspViolations.some((d) => /img-src/.test(d))); i++)
      await new Promise((r) => setTimeout(r, 50));
    return {fetched, v: window.cspViolations.slice()}; });
  check(blocked.fetched === 'refused' && blocked.v.some((d) => /connect-src/.test(d)) && blocked.v.some((d) => /img-src/.test(d)),
        `${name}: CSP refuses a fetch and an image from elsewhere (${blocked.v.join(', ')})`,
        `${name}: fetch ${blocked.fetched}, violations ${JSON.stringify(blocked.v)}`);
}

// a page that gets no animation frames (a hidden tab) still completes
// (open() waited for body[data-complete]), its table past the first 60 rows
async function noFrames(page, name) {
  const all = await siteCount(page), rows = await tableRows(page);
  check(all > 60 && rows === Math.min(all, 500), `${name}: complete without animation frames, ${rows} of ${all} sites`,
        `${name}: ${rows} rows of ${all} sites (more than 60 needed)`);
}

// the page of a browser without DecompressionStream says what is missing
async function noDecompression(page, name) {
  const msg = await page.isVisible('#msg') ? await page.textContent('#msg') : '';
  check(/DecompressionStream/.test(msg), `${name}: '${msg}'`, `${name}: message '${msg}'`);
}

// F's value in the page once it is truthy, checked every 50 ms for 60 s at
// most (page.waitForFunction polls by an eval, which the page's CSP refuses)
async function poll(page, f) {
  for (let i = 0; i < 1200; i++) {
    const v = await page.evaluate(f);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${f} after 60 s`);
}

// a page that arrives slowly, cut in the middle of a block after the
// script: the block is unpacked only once the whole document is there. The
// browser puts a block's text in as it parses it, so a block unpacked before
// that is cut short, which failed in CI as "TypeError: Failed to fetch" (the
// page then never completed). Served over HTTP from here: the first part up
// to the middle of memtrace-bins, the rest once the page is drawn and has
// had time to ask for its other blocks.
async function slowLoad(browser, name, tr) {
  const html = path.join(outdir, 'page-' + name + '.html');
  execFileSync(cli, ['report', tr, '-o', html]);
  const body = fs.readFileSync(html), at = body.indexOf('id="memtrace-bins">');
  const cut = at + Math.floor((body.indexOf('</script>', at) - at) / 2);
  let release;
  const released = new Promise((r) => { release = r; });
  const server = http.createServer((req, res) => {
    res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
    res.write(body.subarray(0, cut));
    released.then(() => res.end(body.subarray(cut)));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const page = await browser.newPage({viewport: {width: 1280, height: 1000}});
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    const loaded = page.goto(`http://127.0.0.1:${server.address().port}/`, {waitUntil: 'commit'});
    await page.waitForSelector('body[data-drawn]', {timeout: 60000});
    // (after afterPaint the page asks for its other blocks)
    await poll(page, () => typeof lazyWait !== 'undefined' && 'memtrace-bins' in lazyWait);
    const early = await page.evaluate(() => document.readyState);
    release();
    await loaded;
    const st = await poll(page, () => document.body.dataset.complete || document.body.dataset.error);
    const d = await page.evaluate(() => ({...document.body.dataset}));
    const rows = await tableRows(page);
    check(early === 'loading' && d.complete && !d.error && rows > 60 && !errors.length,
          `${name}: cut in memtrace-bins while drawn, completes (${rows} rows)`,
          `${name}: state '${early}' when released, then ${st}: ${JSON.stringify(d)}, ${rows} rows, errors ${JSON.stringify(errors)}`);
  } finally {
    release();
    await page.close();
    server.close();
  }
}

// each check on its own: one that throws fails alone
async function step(f, page, name) {
  try { await f(page, name); } catch (e) { fail(`${name}: ${f.name}: ${String(e && e.message || e).split('\n')[0]}`); }
}

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--no-first-run', '--disable-component-update', '--disable-sync']});
  const corpusTrace = trace('traces/real-ocamlopt-1e-5.ctf');
  const pages = [
    ['corpus', corpusTrace, {init: labelSpy},
     [tooltip, dragOutside, liveScale, peakLabel, windowHeaders, search, flameLabels]],
    ['ocamlopt', trace('traces/ref-example-ocamlopt.ctf'), {}, [sitesNote, peakLabel, infoRate]],
    ['longinfo', trace('traces/synth-info-long.ctf'), {}, [longInfo]],
    ['empty', trace('malformed/bad-info-only.ctf'), {}, [empty]],
    // filters that select nothing: the note names them
    ['filtered', corpusTrace, {options: ['--min-size', '1024G']}, [empty]],
    // no DecompressionStream (an old browser): a visible message naming it
    ['nodecompress', corpusTrace, {init: () => { delete window.DecompressionStream; }, wait: 'body[data-error]',
                                   errorsExpected: true}, [noDecompression]],
    ['csp', corpusTrace, {errorsExpected: true}, [csp]],
    ['noframes', trace('traces/ref-example-ocamlopt.ctf'), {init: () => { window.requestAnimationFrame = () => 0; }},
     [noFrames]]];
  for (const [name, tr, opts, checks] of pages) {
    let page;
    try { page = await open(browser, name, tr, opts); } catch (e) { fail(`${name}: ${e.message.split('\n')[0]}`); continue; }
    for (const f of checks) await step(f, page, name);
    if (opts.errorsExpected) await page.close(); else await close(page, name);
  }
  try { await slowLoad(browser, 'slowload', trace('traces/ref-example-ocamlopt.ctf')); }
  catch (e) { fail(`slowload: ${String(e && e.message || e).split('\n')[0]}`); }
  await browser.close();
  console.log(fails ? `${fails} failure(s)` : 'all report page tests passed');
  process.exit(fails ? 1 : 0);
})();
