// validate.js - check a `memtrace speedscope` file against speedscope's
// JSON schema (from the speedscope npm package) with ajv, then the facts
// the schema cannot state (frame indices in range, one weight per sample,
// weights summing to endValue), and print per profile its total and the
// bytes per leaf frame ("PROFILE<TAB>total<TAB>BYTES", "PROFILE<TAB>LEAF<TAB>BYTES").
//   node validate.js NODE_MODULES FILE.json
'use strict';
const path = require('path');
const fs = require('fs');
const [nodeModules, file] = process.argv.slice(2);
const Ajv = require(path.join(nodeModules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(
  path.join(nodeModules, 'speedscope/dist/release/file-format-schema.json'), 'utf8'));
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
const validate = ajv.compile(schema);
if (!validate(data)) {
  console.error('schema violations:', JSON.stringify(validate.errors, null, 1));
  process.exit(1);
}
const nframes = data.shared.frames.length;
let bad = 0;
for (const p of data.profiles) {
  if (p.type !== 'sampled' || p.unit !== 'bytes') { console.error(`${p.name}: not sampled/bytes`); bad++; }
  if (p.samples.length !== p.weights.length) { console.error(`${p.name}: samples/weights lengths differ`); bad++; }
  let sum = 0;
  const leaf = new Map();
  p.samples.forEach((st, i) => {
    if (!st.every((f) => Number.isInteger(f) && f >= 0 && f < nframes)) { bad++; }
    const w = p.weights[i];
    if (!(w > 0)) bad++;
    sum += w;
    const name = st.length ? data.shared.frames[st[st.length - 1]].name : '(none)';
    leaf.set(name, (leaf.get(name) || 0) + w);
  });
  if (Math.abs(sum - p.endValue) > 1e-6 * Math.max(1, p.endValue)) {
    console.error(`${p.name}: weights sum ${sum} != endValue ${p.endValue}`); bad++;
  }
  console.log(`${p.name}\ttotal\t${sum}`);
  for (const [k, v] of leaf) console.log(`${p.name}\t${k}\t${v}`);
}
if (bad) { console.error(`${bad} structural error(s)`); process.exit(1); }
