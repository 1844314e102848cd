/**
 * weft's grammar engine against xgrammar (WASM) and llguidance (Rust), same
 * vocabulary, same schemas, same random walks.
 *
 *   npm run bench:guided-engines        (WALKS=30 by default)
 *
 * Vocabulary: the 151,936-token synthetic byte-level one bench:guided uses
 * (test/guided/synthetic-vocabulary.ts). Schemas: the demo model's five tool
 * schemas (models/weft-demo/tools.json) and the JSON-schema suite of the
 * grammar tests (test/guided/schema-suite.ts). For each engine and schema:
 * compile time (median of 3 fresh compiles), then WALKS seeded random walks
 * (uniform over the allowed tokens, the end token taken a quarter of the time
 * it is allowed, at most 300 tokens), each mask timed. Walk 1 runs on a fresh
 * compile ("first request": weft walks its trie for every state it has not
 * seen); walks 2.. reuse the compiled grammar ("later requests"). Every ended
 * walk's text must parse and validate with ajv; a sampled token the engine
 * then rejects, an exception, or an empty mask counts as an error. Engines
 * run one after another in one process on one thread.
 */
import { Ajv } from 'ajv';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { END_STACK, Stack } from '../../src/guided/automaton.js';
import { CompiledGrammar } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { anyObjectSpec } from '../../src/guided/json-schema.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { SUITE } from '../../test/guided/schema-suite.js';
import { syntheticVocabulary } from '../../test/guided/synthetic-vocabulary.js';
import { llguidanceEngine, weftEngine, xgrammarEngine, type Engine, type EngineMatcher } from './engines.js';

const VOCAB = 151_936;
const WALKS = Number(process.env.WALKS ?? 30);
const MAX_TOKENS = 300;
const { vocabulary, endToken } = syntheticVocabulary(VOCAB, 7);
const words = (VOCAB + 31) >>> 5;

const demoTools = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'models', 'weft-demo', 'tools.json'), 'utf8')) as ToolDefinition[];
const only = process.env.SCHEMAS?.split(',');
const schemas: [string, unknown, 'tools' | 'suite'][] = [
  ...demoTools.map((t): [string, unknown, 'tools'] => [`tool:${t.function.name}`, t.function.parameters, 'tools']),
  ...Object.entries(SUITE).map(([name, schema]): [string, unknown, 'suite'] => [name, schema, 'suite']),
].filter(([name]) => only === undefined || only.includes(name));

const median = (xs: number[]): number => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
const quantile = (xs: number[], q: number): number => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!);

interface WalkResult {
  maskMs: number[];
  ended: boolean;
  text: string;
  error?: string;
  /** The output's bytes (hex) when they are not valid UTF-8. */
  invalidUtf8?: string;
}

const popcount = (w: number): number => {
  let n = 0;
  for (let x = w >>> 0; x !== 0; x &= x - 1) n++;
  return n;
};
/** Allowed tokens below the vocabulary size (an engine may pad its last mask word). */
function countAllowed(mask: Uint32Array): number {
  let n = 0;
  for (let w = 0; w < words; w++) n += popcount(w === words - 1 ? mask[w]! & lastWordBits : mask[w]!);
  return n;
}
const lastWordBits = VOCAB % 32 === 0 ? 0xffffffff : (1 << VOCAB % 32) - 1;
/** The n-th allowed token (0-based), in id order. */
function nthAllowed(mask: Uint32Array, n: number): number {
  let left = n;
  for (let w = 0; w < words; w++) {
    let word = (w === words - 1 ? mask[w]! & lastWordBits : mask[w]!) >>> 0;
    const c = popcount(word);
    if (left >= c) {
      left -= c;
      continue;
    }
    for (;;) {
      const b = 31 - Math.clz32(word & -word);
      if (left === 0) return (w << 5) | b;
      word &= word - 1;
      left--;
    }
  }
  throw new Error('no allowed token');
}

async function walk(m: EngineMatcher, seed: number): Promise<WalkResult> {
  let state = seed >>> 0 || 1;
  const mask = new Uint32Array(words);
  const bytes: number[] = [];
  const maskMs: number[] = [];
  try {
    for (let step = 0; step < MAX_TOKENS && !m.isTerminated(); step++) {
      const t0 = performance.now();
      const any = await m.fillMask(mask);
      maskMs.push(performance.now() - t0);
      if (!any) return { maskMs, ended: false, text: '', error: 'empty mask' };
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      const token = (mask[endToken >>> 5]! & (1 << (endToken & 31))) !== 0 && state % 4 === 0 ? endToken : nthAllowed(mask, Math.floor((state / 2 ** 32) * countAllowed(mask)));
      if (!m.acceptToken(token)) return { maskMs, ended: false, text: '', error: `masked token ${token} rejected` };
      if (token === endToken) break;
      bytes.push(...vocabulary.tokenBytes[token]!);
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return { maskMs, ended: m.isTerminated(), text: '', invalidUtf8: Buffer.from(bytes).toString('hex') };
    }
    return { maskMs, ended: m.isTerminated(), text };
  } catch (e) {
    return { maskMs, ended: false, text: '', error: `threw: ${(e as Error).message.slice(0, 120)}` };
  } finally {
    m.dispose();
  }
}

interface SchemaRow {
  engine: string;
  schema: string;
  group: 'tools' | 'suite';
  compileMs: number;
  firstMaskMs: number[];
  laterMaskMs: number[];
  ended: number;
  invalid: number;
  errors: number;
  unfinished: number;
  refused?: string;
  example?: string;
  unfinishedExample?: string;
}

const ajv = new Ajv({ strict: false });

async function measure(engine: Engine, name: string, schema: unknown, group: 'tools' | 'suite'): Promise<SchemaRow> {
  const row: SchemaRow = { engine: engine.name, schema: name, group, compileMs: NaN, firstMaskMs: [], laterMaskMs: [], ended: 0, invalid: 0, errors: 0, unfinished: 0 };
  const compileTimes: number[] = [];
  let compiled: Awaited<ReturnType<Engine['compile']>> | undefined;
  try {
    for (let i = 0; i < 3; i++) {
      compiled?.dispose();
      const t0 = performance.now();
      compiled = await engine.compile(schema);
      compileTimes.push(performance.now() - t0);
    }
  } catch (e) {
    row.refused = (e as Error).message.slice(0, 100);
    return row;
  }
  row.compileMs = median(compileTimes);
  const validate = ajv.compile(schema as object);
  for (let seed = 1; seed <= WALKS; seed++) {
    const result = await walk(await compiled!.matcher(), seed);
    (seed === 1 ? row.firstMaskMs : row.laterMaskMs).push(...result.maskMs);
    if (result.error !== undefined) {
      row.errors++;
      row.example ??= result.error;
      continue;
    }
    if (!result.ended) {
      row.unfinished++;
      row.unfinishedExample ??= result.text.slice(0, 60) + '...' + result.text.slice(-40);
      continue;
    }
    row.ended++;
    if (result.invalidUtf8 !== undefined) {
      row.invalid++;
      row.example ??= `invalid UTF-8: ${result.invalidUtf8.slice(0, 120)}`;
      continue;
    }
    let why: string | undefined;
    try {
      if (!validate(JSON.parse(result.text))) why = ajv.errorsText(validate.errors);
    } catch (e) {
      why = `JSON.parse: ${(e as Error).message.slice(0, 60)}`;
    }
    if (why !== undefined) {
      row.invalid++;
      row.example ??= `invalid: ${JSON.stringify(result.text.slice(0, 80))} (${why})`;
    }
  }
  compiled!.dispose();
  return row;
}

/** weft's one-time work per vocabulary: the trie, and the free-string token index (built on the first string mask). */
const weftPrepare = (): void => {
  const grammar = new CompiledGrammar(vocabulary, new Stack(valueStart(anyObjectSpec()), END_STACK));
  const m = grammar.matcher([endToken]);
  for (const b of new TextEncoder().encode('{"')) m.acceptToken(b);
  m.fillMask(new Uint32Array(words));
};

console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, load ${loadavg()[0]!.toFixed(2)}; vocabulary ${VOCAB} tokens (${vocabulary.numNodes} trie nodes), ${WALKS} walks per schema`);
const engines: Engine[] = [weftEngine(vocabulary, endToken, weftPrepare), await xgrammarEngine(vocabulary, endToken)];
const llg = llguidanceEngine(vocabulary, endToken);
if (llg) engines.push(llg);
else console.log('llguidance: not built (bench/guided-engines/build.sh needs cargo); skipped');

// Engines take turns per schema, so the shared machine's load falls on all of them alike.
const rows: SchemaRow[] = [];
for (const [name, schema, group] of schemas) {
  for (const engine of engines) rows.push(await measure(engine, name, schema, group));
  console.error(`  ${name} done (load ${loadavg()[0]!.toFixed(1)})`);
}
rows.sort((a, b) => engines.findIndex((e) => e.name === a.engine) - engines.findIndex((e) => e.name === b.engine));

// Single states where nearly every token is allowed: a fresh compile, the prefix fed byte by byte
// (ids 0-255 are the bytes), then the first mask there and the same mask for a second matcher.
const STATES: [string, unknown, string][] = [
  ['json_object key', { type: 'object' }, '{"k'],
  ['json_object value', { type: 'object' }, '{"k": "v'],
  ['string maxLength 64', { type: 'array', items: { type: 'string', maxLength: 64 } }, '["abc'],
];
const stateRows: Record<string, string | number>[] = [];
for (const [what, schema, prefix] of STATES) {
  for (const engine of engines) {
    const first: number[] = [];
    const second: number[] = [];
    for (let round = 0; round < 5; round++) {
      const compiled = await engine.compile(schema);
      for (const into of [first, second]) {
        const m = await compiled.matcher();
        for (const b of new TextEncoder().encode(prefix)) if (!m.acceptToken(b)) throw new Error(`${engine.name} rejected ${prefix}`);
        const t0 = performance.now();
        await m.fillMask(new Uint32Array(words));
        into.push(performance.now() - t0);
        m.dispose();
      }
      compiled.dispose();
    }
    stateRows.push({ state: what, engine: engine.name, firstMaskMs: +median(first).toFixed(3), sameStateAgainMs: +median(second).toFixed(3) });
  }
}
console.log('\nfree-string states (medians of 5 fresh compiles):');
console.table(stateRows);

// Coverage: keywords weft refuses (typed InvalidOptionError) rather than weaken; do the others compile them?
const COVERAGE: [string, unknown][] = [
  ['pattern', { type: 'string', pattern: '^[a-z]{2,5}$' }],
  ['minimum/maximum', { type: 'integer', minimum: 1, maximum: 12 }],
  ['format date', { type: 'string', format: 'date' }],
  ['minProperties', { type: 'object', minProperties: 1 }],
  ['uniqueItems', { type: 'array', items: { type: 'integer' }, uniqueItems: true }],
  ['allOf', { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'boolean' } }, required: ['b'] }] }],
];
const coverage: Record<string, Record<string, string>> = {};
for (const engine of engines) {
  coverage[engine.name] = {};
  let instance = 100;
  for (const [what, schema] of COVERAGE) {
    const target = engine.name.startsWith('xgrammar') ? await xgrammarEngine(vocabulary, endToken, instance++) : engine;
    try {
      (await target.compile(schema)).dispose();
      coverage[engine.name]![what] = 'compiles';
    } catch (e) {
      coverage[engine.name]![what] = `refused: ${(e as Error).message.split('\n')[0]!.slice(0, 60)}`;
    }
  }
}
console.log('\ncoverage (compile only):');
for (const [engine, results] of Object.entries(coverage)) for (const [what, outcome] of Object.entries(results)) console.log(`${engine.padEnd(32)} ${what.padEnd(16)} ${outcome}`);

// Misuse: what each engine does, and whether it still compiles and masks afterwards. xgrammar gets a
// fresh WASM instance per case (an abort would otherwise hide the cases after it).
const MISUSE: [string, (engine: Engine) => Promise<unknown>][] = [
  ['key with " and \\', (e) => e.compile(SUITE.escapes)],
  ['unknown type', (e) => e.compile({ type: 'strin' })],
  ['token id past the vocabulary', async (e) => (await (await e.compile(SUITE.calculator)).matcher()).acceptToken(VOCAB + 5)],
  ['rollback past the start', async (e) => (await (await e.compile(SUITE.calculator)).matcher()).rollback(10)],
];
const robustness: Record<string, Record<string, string>> = {};
for (const engine of engines) {
  const results: Record<string, string> = {};
  let instance = 1;
  for (const [what, action] of MISUSE) {
    const target = engine.name.startsWith('xgrammar') ? await xgrammarEngine(vocabulary, endToken, instance++) : engine;
    let outcome: string;
    try {
      outcome = `returned ${JSON.stringify(await action(target))}`;
    } catch (e) {
      outcome = `threw ${(e as Error).message.split('\n')[0]!.slice(0, 70)}`;
    }
    let after: string;
    try {
      const m = await (await target.compile(SUITE.calculator)).matcher();
      after = (await m.fillMask(new Uint32Array(words))) ? 'works after' : 'empty mask after';
    } catch (e) {
      after = `dead after (${(e as Error).message.split('\n')[0]!.slice(0, 40)})`;
    }
    results[what] = `${outcome}; ${after}`;
  }
  robustness[engine.name] = results;
}
console.log('\nmisuse:');
for (const [engine, results] of Object.entries(robustness)) for (const [what, outcome] of Object.entries(results)) console.log(`${engine.padEnd(32)} ${what.padEnd(30)} ${outcome}`);

const fmt = (x: number, d = 3): string => (Number.isFinite(x) ? x.toFixed(d) : '-');
console.log('\nper schema: compile ms | first-request mask ms median/p99/max | later mask ms median/p99 | ended/invalid/errors/unfinished');
for (const r of rows) {
  if (r.refused !== undefined) {
    console.log(`${r.engine.padEnd(32)} ${r.schema.padEnd(20)} refused: ${r.refused}`);
    continue;
  }
  console.log(
    `${r.engine.padEnd(32)} ${r.schema.padEnd(20)} ${fmt(r.compileMs, 2).padStart(8)} | ${fmt(median(r.firstMaskMs))}/${fmt(quantile(r.firstMaskMs, 0.99))}/${fmt(Math.max(...r.firstMaskMs))} | ${fmt(median(r.laterMaskMs))}/${fmt(quantile(r.laterMaskMs, 0.99))} | ${r.ended}/${r.invalid}/${r.errors}/${r.unfinished}${r.example ? `  e.g. ${r.example}` : ''}${r.unfinishedExample && process.env.VERBOSE ? `  unfinished: ${JSON.stringify(r.unfinishedExample)}` : ''}`,
  );
}

const summary = engines.map((engine) => {
  const mine = rows.filter((r) => r.engine === engine.name && r.refused === undefined);
  const tools = mine.filter((r) => r.group === 'tools');
  const suite = rows.filter((r) => r.engine === engine.name && r.group === 'suite');
  const first = mine.flatMap((r) => r.firstMaskMs);
  const later = mine.flatMap((r) => r.laterMaskMs);
  return {
    engine: engine.name,
    prepareVocabularyMs: +engine.prepareMs.toFixed(1),
    compileDemoToolsMs: +tools.reduce((s, r) => s + r.compileMs, 0).toFixed(2),
    compileMedianMs: +median(mine.map((r) => r.compileMs)).toFixed(3),
    firstRequestMaskMsMedian: +median(first).toFixed(4),
    firstRequestMaskMsP99: +quantile(first, 0.99).toFixed(3),
    firstRequestMaskMsMax: +Math.max(...first).toFixed(3),
    laterMaskMsMedian: +median(later).toFixed(4),
    laterMaskMsP99: +quantile(later, 0.99).toFixed(3),
    batch16LaterMaskMs: +(16 * median(later)).toFixed(3),
    suiteWalksEnded: suite.reduce((s, r) => s + r.ended, 0),
    suiteInvalid: suite.reduce((s, r) => s + r.invalid, 0),
    suiteErrors: suite.reduce((s, r) => s + r.errors, 0),
    suiteUnfinished: suite.reduce((s, r) => s + r.unfinished, 0),
    refused: rows.filter((r) => r.engine === engine.name && r.refused !== undefined).map((r) => r.schema),
  };
});
console.log('\nsummary:');
console.table(summary.map(({ refused, ...s }) => ({ ...s, refused: refused.join(',') })));
console.log(JSON.stringify({ vocabulary: VOCAB, walks: WALKS, load: +loadavg()[0]!.toFixed(2), summary, states: stateRows, coverage, robustness }));
