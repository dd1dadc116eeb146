// A second consumer of the lam_ref test vectors, in JavaScript (node >= 18), sharing no code with
// the Python suite: it implements the core decision rule (SPEC §2, §5) and L0 (SPEC §7, with
// lam_ref's stub text) from docs/spec.md and runs core.json, l0.json and l0-stubs.json.
//
//   node consumer.mjs [FOLDER] [PROFILE ...]     (default: this file's folder; core l0 l0-stubs)
//
// Prints one line per profile and exits 1 if any vector fails (2 on a malformed file).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const folder = args.length && args[0].includes("/") ? args.shift() : here;
const profiles = args.length ? args : ["core", "l0", "l0-stubs"];

// ---------------------------------------------------------------- encodings (docs/vectors.md)
function bytes(hex) {
  if (typeof hex !== "string" || !/^([0-9a-f]{2})*$/.test(hex)) throw new Error(`bad hex ${String(hex).slice(0, 20)}`);
  return Buffer.from(hex, "hex");
}
function array(obj) { // {dtype, shape, hex}: little-endian C order
  const b = bytes(obj.hex);
  const n = obj.shape.reduce((a, s) => a * s, 1);
  if (obj.dtype !== "float32" || b.length !== 4 * n) throw new Error(`bad array header ${obj.dtype} ${obj.shape}`);
  const v = new Float32Array(n);
  for (let k = 0; k < n; k++) v[k] = b.readFloatLE(4 * k);
  return { shape: obj.shape, values: v };
}
function ints(obj) { // [..] or {runs: [[start, count, step], ...]}
  if (Array.isArray(obj)) return obj;
  const out = [];
  for (const [start, count, step] of obj.runs) for (let k = 0; k < count; k++) out.push(start + k * step);
  return out;
}
function scalar(x) { return x === "nan" ? NaN : x === "inf" ? Infinity : x === "-inf" ? -Infinity : x; }
function embeddings(obj) { // -> {shape, rows: function(i) -> Float32Array}
  if (obj.table) {
    const t = array(obj.table), idx = ints(obj.index), d = t.shape[1];
    return { shape: [idx.length, d], row: (i) => t.values.subarray(idx[i] * d, idx[i] * d + d) };
  }
  if (obj.sign_patterns) {
    const d = obj.sign_patterns.dim, s = array(obj.sign_patterns.scale).values[0], idx = ints(obj.index);
    const row = (i) => {
      const r = new Float32Array(d);
      for (let j = 0; j < d; j++) r[j] = j < 53 && Math.floor(idx[i] / 2 ** j) % 2 === 1 ? -s : s;
      return r;
    };
    return { shape: [idx.length, d], row };
  }
  const a = array(obj);
  const d = a.shape.length === 2 ? a.shape[1] : 0;
  return { shape: a.shape, row: (i) => a.values.subarray(i * d, i * d + d) };
}

// ---------------------------------------------------------------- the core rule (SPEC §2, §5)
class Rejected extends Error {}

function substitute(E, t) {
  if (typeof t !== "number" || !(t >= -1 && t <= 1)) throw new Rejected(`t must be in [-1, 1], got ${t}`);
  if (E.shape.length !== 2 || E.shape[1] === 0) throw new Rejected(`embeddings must be (N, D) with D > 0, got [${E.shape}]`);
  const [n, d] = E.shape;
  const rows = [];
  for (let i = 0; i < n; i++) {
    const r = Float64Array.from(E.row(i));
    let s = 0;
    for (const v of r) s += v * v;
    const norm = Math.sqrt(s);
    if (!Number.isFinite(norm)) throw new Rejected(`embeddings row ${i} is not finite`);
    if (norm === 0) throw new Rejected(`embeddings row ${i} is a zero row`);
    if (Math.abs(norm - 1) > 1e-4) throw new Rejected(`embeddings row ${i} has norm ${norm}`);
    rows.push(r);
  }
  const d2 = 2.0 - 2.0 * t; // float64
  const kept = [], pi = [];
  for (let i = 0; i < n; i++) {
    let rep = i;
    for (const k of kept) { // ascending ids: the first within δ is the lowest
      let sq = 0;
      for (let j = 0; j < d; j++) { const x = rows[i][j] - rows[k][j]; sq += x * x; }
      if (sq <= d2) { rep = k; break; }
    }
    if (rep === i) kept.push(i);
    pi.push(rep);
  }
  return pi;
}

// ---------------------------------------------------------------- L0 (SPEC §7), stubs of SPEC §8.1
// Whitespace is the set SPEC §7.1 lists (Python's str.isspace), not JavaScript's trim().
const WHITESPACE = new Set([..."\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"]);
for (let c = 0x2000; c <= 0x200a; c++) WHITESPACE.add(String.fromCharCode(c));
const isBlank = (line) => [...line].every((ch) => WHITESPACE.has(ch));

function dedupLines(records, prefix) {
  const seen = new Map(); // line -> [record, output line]
  return records.map((text, r) => {
    const out = [];
    let run = 0, first = null;
    const endRun = () => { if (run) out.push(`${prefix}L0 ${run} lines=r${first[0]}:${first[1]}]`); run = 0; };
    for (const line of text.split("\n")) {
      const isProtected = isBlank(line) || line.startsWith(prefix);
      if (!isProtected && seen.has(line)) {
        if (!run) first = seen.get(line);
        run++;
        continue;
      }
      endRun();
      if (!isProtected) seen.set(line, [r, out.length]);
      out.push(line);
    }
    endRun();
    return out.join("\n");
  });
}

// ---------------------------------------------------------------- running the vectors
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function runCore(v) {
  let got;
  try { got = substitute(embeddings(v.input.embeddings), scalar(v.input.t)); } catch (e) {
    if (!(e instanceof Rejected)) throw e;
    return v.result === "invalid" || v.may_reject ? null : `refused a valid input: ${e.message}`;
  }
  if (v.result === "invalid") return "accepted an input that must be refused";
  const wants = [v.expected, ...(v.alternatives || [])].map((w) => ints(w.pi));
  return wants.some((w) => same(w, got)) ? null : `π differs: got ${JSON.stringify(got).slice(0, 80)}`;
}

function runL0(v, doc) {
  const prefix = doc.stub_prefix;
  const got = dedupLines(v.input.records, prefix);
  const matches = (want) => want.records.every((rec, r) => {
    if (typeof rec === "string") return rec === got[r]; // l0-stubs: the exact text
    const lines = got[r].split("\n");
    return lines.length === rec.length && rec.every((tok, k) => (typeof tok === "string" ? tok === lines[k] : lines[k].startsWith(prefix)));
  }) && want.records.length === got.length;
  return [v.expected, ...(v.alternatives || [])].some(matches) ? null : `records differ: got ${JSON.stringify(got).slice(0, 80)}`;
}

let failed = 0;
for (const profile of profiles) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(join(folder, `${profile}.json`), "utf8"));
    if (doc.schema !== "lam_ref.conformance.vectors" || doc.schema_version !== 1 || doc.profile !== profile) throw new Error("not a version 1 vector file of this profile");
  } catch (e) {
    console.error(`consumer.mjs: error: ${join(folder, profile + ".json")}: ${e.message}`);
    process.exit(2);
  }
  const run = profile === "core" ? runCore : profile.startsWith("l0") ? runL0 : null;
  if (!run) { console.error(`consumer.mjs: error: profile ${profile} is not implemented here`); process.exit(2); }
  let bad = 0;
  for (const v of doc.vectors) {
    const why = run(v, doc);
    if (why !== null) { bad++; console.log(`  FAIL ${profile} #${v.id} [${v.flags.join(", ")}] ${v.comment}: ${why}`); }
  }
  failed += bad;
  console.log(`${profile}: ${doc.vectors.length} vectors, ${doc.vectors.length - bad} passed, ${bad} failed`);
}
process.exit(failed ? 1 : 0);
