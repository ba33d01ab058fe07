// window_check.js - does a report page's flame graph for a time window
// agree with `memtrace flamegraph --lines --from A --to B` for the same
// window? Used by report_cli.sh (on the page's data, with the window's
// values derived here from the bins block, independently of the page's
// script) and by report_test.js (on what the page itself computed).
//
// The CLI's folded stacks keep only the first occurrence of a frame in a
// stack (recursion folded into its outermost call) and leave out stacks of
// one frame; the page's tree keeps every frame. So a page node is compared
// with the folded stack of its path (its path without repeated frames)
// only when it is the only page node whose frame is new on its path with
// that folded stack, and the folded stack holds the node's samples over the
// whole trace too (no frame pruned from the page folds into it). Such a
// node of depth 2 or more at least a pixel wide (1/1200 of the window's
// samples, the flame graph being 1200 pixels wide) on either side must
// hold exactly the samples of its folded stack in the window.
// `memtrace speedscope --from A --to B` folds nothing: against it, every
// node at least a pixel wide is compared.
//   node window_check.js PAGE.html FIRST_BIN END_BIN WHOLE.folded [SPEEDSCOPE.json] < WINDOW.folded
//     (the window is bins FIRST_BIN .. END_BIN - 1; the folded stacks are
//     `memtrace flamegraph --lines` output for the window and the whole
//     trace; prints what it checked, exit 1 on a disagreement or when
//     nothing could be compared)
'use strict';

const PIXELS = 1200;

// The page's frame labels as --lines prints them: FUNCTION (FILE:LINE).
function labelsOf(D) {
  const S = D.strings, F = D.frames, fr = D.nodes.frame;
  return Array.from(fr, (f, i) => i ? `${S[F[3 * f]]} (${S[F[3 * f + 1]]}:${F[3 * f + 2]})` : '');
}

// A trie of folded paths: id 0 the root; child(id, label) -> id.
function makeTrie() {
  const ids = new Map(), depth = [0];
  return {depth, child(id, label) {
    const k = id + '\u0000' + label;
    let c = ids.get(k);
    if (c === undefined) { c = depth.length; depth.push(depth[id] + 1); ids.set(k, c); }
    return c; }};
}

// The nonzero remainders of the bins block as [node, bin, samples]: per
// node a mask of its nonzero bins (words of 32), then their samples.
function remainders(D, B) {
  const W = Math.ceil(D.nbins / 32), r = [];
  for (let j = 0, k = 0; j < B.node.length; j++)
    for (let b = 0; b < D.nbins; b++)
      if (Math.floor(B.mask[j * W + Math.floor(b / 32)] / 2 ** (b % 32)) % 2) r.push([B.node[j], b, B.n[k++]]);
  return r;
}

// The window's values of the page's nodes from its data: the binned
// nodes' remainders in bins [b0, b1), summed up the tree (parents from the
// preorder depths).
function windowValues(D, B, b0, b1) {
  const N = D.nodes.depth.length, v = new Float64Array(N), parent = new Int32Array(N), st = [];
  for (let i = 0; i < N; i++) { const d = D.nodes.depth[i]; parent[i] = d ? st[d - 1] : -1; st[d] = i; }
  for (const [node, bin, n] of remainders(D, B)) if (bin >= b0 && bin < b1) v[node] += n;
  for (let i = N - 1; i > 0; i--) v[parent[i]] += v[i];
  return v;
}

// The values of folded paths in folded text (FRAME;FRAME;... WEIGHT
// lines), by trie id: the sum of the weights of the lines each begins.
function foldedValues(trie, folded) {
  const v = new Map();
  for (const line of folded.split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (sp < 0) continue;
    const w = +line.slice(sp + 1);
    let id = 0;
    for (const f of line.slice(0, sp).split(';')) {
      id = trie.child(id, f);
      v.set(id, (v.get(id) || 0) + w);
    }
  }
  return v;
}

// Compare the page's window values cum (per node, its subtree's samples)
// with the CLI's folded stacks for the window (folded) and for the whole
// trace (whole). Checked: each node of depth 2 or more that is the only
// one of the page's nodes on its folded path (and its frame is not
// already on its path), and whose folded path has the node's value over
// the whole trace (so no node pruned from the page folds into it either);
// when it is at least a pixel wide in the window on either side, both must
// be equal. Returns {checked, exact, ambiguous, bad: [messages], px}.
function compare(D, cum, folded, whole) {
  const labels = labelsOf(D), N = labels.length, trie = makeTrie();
  const cli = foldedValues(trie, folded), cliWhole = foldedValues(trie, whole);
  // the whole trace's subtree sums (the page's own samples, summed up)
  const all = Float64Array.from(D.nodes.alloc), parent = new Int32Array(N);
  // the page's nodes on the CLI's terms, in preorder: key[i] the folded
  // path of node i's path; on[label]: how often label is on the path;
  // members[key]: the nodes whose frame is new on their path, per key
  const key = new Int32Array(N), repeat = new Uint8Array(N), members = new Map(), on = new Map(), path = [];
  for (let i = 1; i < N; i++) {
    const d = D.nodes.depth[i];
    while (path.length >= d) { const j = path.pop(); on.set(labels[j], on.get(labels[j]) - 1); }
    const p = path.length ? path[path.length - 1] : 0, l = labels[i];
    parent[i] = p;
    if (on.get(l)) { key[i] = key[p]; repeat[i] = 1; }
    else { key[i] = trie.child(key[p], l); members.set(key[i], (members.get(key[i]) || 0) + 1); }
    path.push(i); on.set(l, (on.get(l) || 0) + 1);
  }
  for (let i = N - 1; i > 0; i--) all[parent[i]] += all[i];
  const px = cum[0] / PIXELS, r = {checked: 0, exact: 0, ambiguous: 0, bad: [], px};
  for (let i = 1; i < N; i++) {
    if (D.nodes.depth[i] < 2 || repeat[i]) continue;
    const c = cli.get(key[i]) || 0, g = cum[i];
    if (Math.max(c, g) < Math.max(px, 1)) continue;
    if (members.get(key[i]) !== 1 || (cliWhole.get(key[i]) || 0) !== all[i]) { r.ambiguous++; continue; }
    r.checked++;
    if (c === g) r.exact++;
    else r.bad.push(`node ${i}, ${labels[i]} at depth ${D.nodes.depth[i]}: page ${g} samples, ` +
                    `CLI ${c} (a pixel is ${px.toFixed(1)})`);
  }
  return r;
}

// Compare cum with `memtrace speedscope --from A --to B`'s allocated
// profile (ss, its parsed JSON: every distinct backtrace with its bytes,
// frames as the page's, nothing folded): every node at least a pixel wide
// on either side must hold the samples of the backtraces its path begins.
// Returns {checked, exact, bad: [messages], px}.
function compareSpeedscope(D, cum, ss) {
  const labels = labelsOf(D), N = labels.length, trie = makeTrie(), truth = new Map();
  const fr = ss.shared.frames.map((f) => `${f.name} (${f.file}:${f.line})`);
  const prof = ss.profiles.find((p) => p.name === 'allocated');
  prof.samples.forEach((stack, j) => {
    const n = Math.round(prof.weights[j] / D.bytes_per_sample);
    truth.set(0, (truth.get(0) || 0) + n);
    let id = 0;
    for (const f of stack) { id = trie.child(id, fr[f]); truth.set(id, (truth.get(id) || 0) + n); }
  });
  const id = new Int32Array(N), st = [0];
  const px = cum[0] / PIXELS, r = {checked: 0, exact: 0, bad: [], px};
  for (let i = 0; i < N; i++) {
    const d = D.nodes.depth[i];
    if (i) { id[i] = trie.child(st[d - 1], labels[i]); st[d] = id[i]; }
    const t = truth.get(id[i]) || 0, g = cum[i];
    if (Math.max(t, g) < Math.max(px, 1)) continue;
    r.checked++;
    if (t === g) r.exact++;
    else r.bad.push(`node ${i}, ${labels[i]} at depth ${d}: page ${g} samples, speedscope ${t}`);
  }
  return r;
}

module.exports = {compare, compareSpeedscope, windowValues, remainders};

if (require.main === module) {
  const fs = require('fs'), zlib = require('zlib');
  const [file, b0, b1, foldedWhole, speedscope] = process.argv.slice(2);
  const s = fs.readFileSync(file, 'utf8');
  const get = (id) => { const m = s.match(new RegExp(`<script type="application/x-memtrace" id="${id}">([^<]*)</script>`));
    return JSON.parse(zlib.gunzipSync(Buffer.from(m[1], 'base64')).toString()); };
  const D = get('memtrace-data'), B = get('memtrace-bins');
  const cum = windowValues(D, B, +b0, +b1);
  const r = compare(D, cum, fs.readFileSync(0, 'utf8'), fs.readFileSync(foldedWhole, 'utf8'));
  for (const m of r.bad.slice(0, 5)) console.log('  ' + m);
  console.log(`bins ${b0}-${b1}: ${cum[0]} samples in the window; ${r.checked} frames checked, ` +
              `${r.exact} as the CLI, ${r.bad.length} not (${r.ambiguous} at least a pixel wide ` +
              `not comparable: recursion folds other frames into their folded stack)`);
  let bad = r.bad.length || !r.checked;
  if (speedscope) {
    const q = compareSpeedscope(D, cum, JSON.parse(fs.readFileSync(speedscope, 'utf8')));
    for (const m of q.bad.slice(0, 5)) console.log('  ' + m);
    console.log(`bins ${b0}-${b1}: every frame at least a pixel wide against speedscope: ${q.checked} frames, ` +
                `${q.exact} as speedscope, ${q.bad.length} not`);
    bad = bad || q.bad.length || !q.checked;
  }
  process.exit(bad ? 1 : 0);
}
