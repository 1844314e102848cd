/**
 * Guided JSON on JSONSchemaBench: coverage, correctness and mask time of weft's engine and of its
 * peers in the same run on the same files: llguidance (where its bench binding is built) and
 * xgrammar (@mlc-ai/web-xgrammar, where it is installed in bench/guided-engines).
 *
 *   npm run bench:jsonschemabench -- [DIR]     (DIR defaults to ../shared/jsonschemabench)
 *   npm run bench:guided-peers                 (once: installs xgrammar there, builds llguidance with cargo)
 *   ENGINES=weft,xgrammar npm run bench:jsonschemabench   (a subset of the engines)
 *
 * For each schema file (DIR/*.json: { schema, tests: [{ data, valid }] }, see DIR/README.md):
 * - coverage: whether the engine compiles the schema (weft: compileJsonSchema from weft/guided;
 *   a refusal is an InvalidOptionError naming the keyword);
 * - each instance is serialised compactly (JSON.stringify, the instance's own property order),
 *   tokenised by greedy longest match over a 151,936-token byte-level vocabulary (the synthetic
 *   one of bench:guided: every byte plus seeded multi-byte pieces; no real tokenizer of that size
 *   is in ../shared/models), and fed token by token, then the end token:
 *   valid accepted = every token and the end token accepted; invalid refused = some token or
 *   the end token refused;
 * - compile time per schema, and the mask time of every token of the first MASKED (default 2)
 *   valid instances per schema (a fresh grammar per schema, so most masks are cold: the first
 *   time a state is seen).
 *
 * Each engine runs in a child process, so a schema that crashes or hangs an engine costs that
 * engine that schema (counted as `crashed` / `timedOut`), not the run. Prints a table per source
 * and in total; the last line is one JSON object.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { compileJsonSchema } from '../src/guided/public.js';
import { xgrammarEngine, type Engine } from './guided-engines/engines.js';
import type { Vocabulary } from '../src/guided/vocabulary.js';
import { syntheticVocabulary } from '../test/guided/synthetic-vocabulary.js';

const VOCAB = 151_936;
const MASKED = Number(process.env.MASKED ?? 2);
const MAX_MASKED_TOKENS = 400;
/** A schema that takes longer than this (compile + all its instances) is killed and counted as timed out. */
const SCHEMA_TIMEOUT_MS = Number(process.env.SCHEMA_TIMEOUT_MS ?? 60_000);
const here = import.meta.dirname;
const llguidanceBinary = join(here, 'guided-engines', '.build', 'llguidance.node');
const xgrammarPackage = join(here, 'guided-engines', 'node_modules', '@mlc-ai', 'web-xgrammar', 'package.json');
const PEERS_HOWTO = 'npm run bench:guided-peers (installs @mlc-ai/web-xgrammar in bench/guided-engines, builds the llguidance binding there with cargo: sh bench/guided-engines/build.sh)';

interface SchemaResult {
  file: string;
  compiled: boolean;
  error?: string;
  crashed?: boolean;
  timedOut?: boolean;
  compileMs: number;
  valid: number;
  validAccepted: number;
  invalid: number;
  invalidRefused: number;
  maskMs: number[];
  /** Valid instances refused: the first few, with where. */
  misses?: string[];
}

interface Case {
  schema: unknown;
  tests: { data: unknown; valid: boolean }[];
}

/** Greedy longest-match tokenisation over the vocabulary's trie (every byte is a token, so any text tokenises). */
function tokenize(vocabulary: Vocabulary, text: string): number[] {
  const bytes = new TextEncoder().encode(text);
  const { firstChild, nextSibling, byteOf, tokenAt } = vocabulary.trie;
  const out: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    let node = 0, best = -1, bestLen = 0;
    for (let j = i; j < bytes.length; j++) {
      let child = firstChild[node]!;
      while (child !== -1 && byteOf[child] !== bytes[j]) child = nextSibling[child]!;
      if (child === -1) break;
      node = child;
      if (tokenAt[node] !== -1) [best, bestLen] = [tokenAt[node]!, j - i + 1];
    }
    out.push(best);
    i += bestLen;
  }
  return out;
}

interface BenchMatcher {
  fillMask(mask: Uint32Array): unknown;
  acceptToken(token: number): boolean;
  /** Whether the text may end here (the end token is accepted, or the engine has stopped on a complete value). */
  end(): boolean;
  dispose?(): void;
}
interface BenchEngine {
  compile(schema: unknown): (() => BenchMatcher | Promise<BenchMatcher>) | Promise<() => Promise<BenchMatcher>>;
  /** Frees what compile made (xgrammar's WASM heap). */
  release?(): void;
  /** Whether an error leaves the engine unusable, so the child must restart (an aborted WASM module). */
  fatal?(error: unknown): boolean;
}

function weftEngine(vocabulary: Vocabulary, endToken: number): BenchEngine {
  return {
    compile(schema) {
      // The schema's own language: undeclared keys where additionalProperties allows them (generation's default writes declared keys only).
      const grammar = compileJsonSchema(schema, { undeclaredProperties: 'schema' });
      return () => {
        const m = grammar.matcher(vocabulary, { endTokenIds: [endToken] });
        return { fillMask: (mask) => void m.fillMask(mask), acceptToken: (t) => m.acceptToken(t), end: () => m.acceptToken(endToken) };
      };
    },
  };
}

interface LlgBinding {
  LlgVocabulary: new (bytes: Buffer, offsets: Uint32Array, eos: number) => object;
  LlgMatcher: { jsonSchema(vocabulary: object, schema: string): LlgMatcher };
}
interface LlgMatcher {
  fork(): LlgMatcher;
  fillMask(mask: Uint32Array): boolean;
  acceptToken(t: number): boolean;
  isStopped(): boolean;
}

function llguidanceEngine(vocabulary: Vocabulary, endToken: number): BenchEngine {
  const llg = createRequire(import.meta.url)(llguidanceBinary) as LlgBinding;
  const encoder = new TextEncoder();
  const parts = Array.from({ length: vocabulary.size }, (_, id) => vocabulary.tokenBytes[id] ?? Uint8Array.from([0xff, ...encoder.encode(`<|special_${id}|>`)]));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i]! + p.length));
  const llgVocabulary = new llg.LlgVocabulary(Buffer.concat(parts), offsets, endToken);
  return {
    compile(schema) {
      // Compact separators, as the instances are written; weft's compact also allows one space after them.
      const text = JSON.stringify(typeof schema === 'object' && schema !== null ? { ...schema, 'x-guidance': { whitespace_flexible: false, item_separator: ',', key_separator: ':' } } : schema);
      const compiled = llg.LlgMatcher.jsonSchema(llgVocabulary, text);
      return () => {
        const m = compiled.fork();
        return { fillMask: (mask) => void m.fillMask(mask), acceptToken: (t) => m.acceptToken(t), end: () => m.isStopped() || m.acceptToken(endToken) };
      };
    },
  };
}

/**
 * xgrammar's WASM build, through bench/guided-engines (its packaging workaround), with compact
 * separators and strict mode off: the schema's own language, as for the other two.
 */
async function xgrammarBenchEngine(vocabulary: Vocabulary, endToken: number): Promise<BenchEngine> {
  const engine: Engine = await xgrammarEngine(vocabulary, endToken, 0, { separators: [',', ':'], strict: false });
  let disposers: (() => void)[] = [];
  return {
    async compile(schema) {
      const compiled = await engine.compile(schema);
      disposers.push(() => compiled.dispose());
      return async () => {
        const m = await compiled.matcher();
        disposers.push(() => m.dispose());
        return { fillMask: (mask) => m.fillMask(mask), acceptToken: (t) => m.acceptToken(t), end: () => m.isTerminated() || m.acceptToken(endToken) };
      };
    },
    release() {
      for (const d of disposers.reverse()) d();
      disposers = [];
    },
    // An abort() of the module runs no C++ unwinding: its heap is whatever the aborted call left.
    fatal: (error) => /abort/i.test(String((error as Error)?.message ?? error)),
  };
}

/** The child: runs one engine over files[start..], one JSON line per schema on stdout. */
async function child(engineName: string, files: string[], start: number): Promise<void> {
  const { vocabulary, endToken } = syntheticVocabulary(VOCAB, 7);
  const engine = engineName === 'llguidance' ? llguidanceEngine(vocabulary, endToken) : engineName === 'xgrammar' ? await xgrammarBenchEngine(vocabulary, endToken) : weftEngine(vocabulary, endToken);
  const mask = new Uint32Array((VOCAB + 31) >>> 5);
  for (let f = start; f < files.length; f++) {
    const file = files[f]!;
    const { schema, tests } = JSON.parse(readFileSync(file, 'utf8')) as Case;
    const result: SchemaResult = { file: basename(file), compiled: false, compileMs: 0, valid: 0, validAccepted: 0, invalid: 0, invalidRefused: 0, maskMs: [] };
    process.stdout.write(`START ${f}\n`);
    const started = performance.now();
    let make: (() => BenchMatcher | Promise<BenchMatcher>) | undefined;
    let restart = false;
    try {
      make = await engine.compile(schema);
      result.compiled = true;
    } catch (error) {
      result.error = `${(error as Error).name}: ${(error as Error).message}`.slice(0, 300);
      restart = engine.fatal?.(error) ?? false;
    }
    result.compileMs = performance.now() - started;
    if (make !== undefined && !restart) {
      let masked = 0;
      for (const test of tests) {
        const tokens = tokenize(vocabulary, JSON.stringify(test.data));
        const timeMasks = test.valid && masked < MASKED;
        if (timeMasks) masked++;
        let accepted = 0;
        try {
          const m = await make();
          for (const token of tokens) {
            if (timeMasks && accepted < MAX_MASKED_TOKENS) {
              const t0 = performance.now();
              await m.fillMask(mask);
              result.maskMs.push(performance.now() - t0);
            }
            if (!m.acceptToken(token)) break;
            accepted++;
          }
          if (accepted === tokens.length && m.end()) accepted++;
        } catch (error) {
          result.error = `during a walk: ${(error as Error).message}`.slice(0, 300);
          if (engine.fatal?.(error)) {
            restart = true;
            break;
          }
        }
        const all = accepted === tokens.length + 1;
        if (test.valid) {
          result.valid++;
          if (all) result.validAccepted++;
          else if ((result.misses ??= []).length < 3) {
            const text = JSON.stringify(test.data);
            const at = tokens.slice(0, accepted).reduce((n, t) => n + vocabulary.tokenBytes[t]!.length, 0);
            result.misses.push(`${new TextDecoder().decode(new TextEncoder().encode(text).slice(Math.max(0, at - 40), at))}⟨here⟩${text.slice(at, at + 20)}`.slice(0, 160));
          }
        } else {
          result.invalid++;
          if (!all) result.invalidRefused++;
        }
      }
    }
    engine.release?.();
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
    if (restart) {
      // A fresh process (and module) for the next schema.
      process.stdout.write('RESTART\n');
      process.exit(0);
    }
  }
}

/** Children per engine, each over a contiguous share of the files (JSB_SHARDS; xgrammar takes ~3 s a schema on a loaded 2-core host). */
const SHARDS = Math.max(1, Number(process.env.JSB_SHARDS ?? 1));

/** Runs one engine over all files in SHARDS groups of child processes at once; results in file order. */
async function runEngine(engineName: string, files: string[]): Promise<SchemaResult[]> {
  const size = Math.ceil(files.length / SHARDS);
  const shares = Array.from({ length: SHARDS }, (_, i) => files.slice(i * size, (i + 1) * size)).filter((share) => share.length > 0);
  return (await Promise.all(shares.map((share) => runShare(engineName, share)))).flat();
}

/** Runs one engine in child processes over `files`, restarting after a crash or a timeout. */
async function runShare(engineName: string, files: string[]): Promise<SchemaResult[]> {
  const results: SchemaResult[] = [];
  let next = 0;
  while (next < files.length) {
    const proc = spawn(process.execPath, ['--max-old-space-size=4096', '--import', 'tsx', import.meta.filename], {
      env: { ...process.env, JSB_CHILD: engineName, JSB_START: String(next), JSB_FILES: JSON.stringify(files) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let current = next;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let restart = false;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        proc.kill('SIGKILL');
      }, SCHEMA_TIMEOUT_MS);
    };
    arm();
    const lines = createInterface({ input: proc.stdout! });
    for await (const line of lines) {
      if (line.startsWith('START ')) {
        current = Number(line.slice(6));
        arm();
      } else if (line === 'RESTART') restart = true;
      else if (line.startsWith('RESULT ')) {
        results.push(JSON.parse(line.slice(7)) as SchemaResult);
        next = current + 1;
        if (results.length % 50 === 0 || results.length === files.length) process.stderr.write(`${engineName}: ${results.length}/${files.length}\n`);
      }
    }
    const code = await new Promise<number | null>((done) => (proc.exitCode !== null ? done(proc.exitCode) : proc.on('exit', (c) => done(c))));
    clearTimeout(timer);
    if (next < files.length && (code !== 0 || timedOut)) {
      // The schema in progress took the child down (or ran out of time): counted, and the run goes on after it.
      results.push({ file: basename(files[current]!), compiled: false, crashed: !timedOut, timedOut, error: timedOut ? `over ${SCHEMA_TIMEOUT_MS} ms` : `the process exited (${code})`, compileMs: 0, valid: 0, validAccepted: 0, invalid: 0, invalidRefused: 0, maskMs: [] });
      next = current + 1;
    } else if (next < files.length && !restart) break;
  }
  return results;
}

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return NaN;
  const sorted = Float64Array.from(xs).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
};
const source = (file: string): string => (file.includes('---') ? file.split('---')[0]! : file.replace(/_\d+\.json$/, ''));

interface Summary {
  schemas: number;
  compiled: number;
  coverage: number;
  validAccepted: number;
  invalidRefused: number;
  valid: number;
  invalid: number;
  crashed: number;
  timedOut: number;
  compileMs: { p50: number; p99: number };
  maskMs: { p50: number; p99: number; tokens: number };
}

function summarise(results: SchemaResult[]): Summary {
  const compiled = results.filter((r) => r.compiled);
  const sum = (key: 'valid' | 'validAccepted' | 'invalid' | 'invalidRefused'): number => compiled.reduce((n, r) => n + r[key], 0);
  const masks = compiled.flatMap((r) => r.maskMs);
  const round = (x: number, d = 4): number => Number(x.toFixed(d));
  return {
    schemas: results.length,
    compiled: compiled.length,
    coverage: round(compiled.length / Math.max(1, results.length)),
    validAccepted: sum('valid') === 0 ? NaN : round(sum('validAccepted') / sum('valid')),
    invalidRefused: sum('invalid') === 0 ? NaN : round(sum('invalidRefused') / sum('invalid')),
    valid: sum('valid'),
    invalid: sum('invalid'),
    crashed: results.filter((r) => r.crashed).length,
    timedOut: results.filter((r) => r.timedOut).length,
    compileMs: { p50: round(quantile(compiled.map((r) => r.compileMs), 0.5), 3), p99: round(quantile(compiled.map((r) => r.compileMs), 0.99), 3) },
    maskMs: { p50: round(quantile(masks, 0.5), 4), p99: round(quantile(masks, 0.99), 3), tokens: masks.length },
  };
}

function printTable(title: string, results: SchemaResult[]): void {
  const bySource = new Map<string, SchemaResult[]>();
  for (const r of results) bySource.set(source(r.file), [...(bySource.get(source(r.file)) ?? []), r]);
  console.log(`\n${title}`);
  console.log('source                  schemas  coverage  valid acc.  invalid ref.  compile p50/p99 ms  mask p50/p99 ms');
  const row = (name: string, s: Summary): void =>
    console.log(
      `${name.padEnd(22)} ${String(s.schemas).padStart(8)}  ${s.coverage.toFixed(3).padStart(8)}  ${s.validAccepted.toFixed(3).padStart(10)}  ${s.invalidRefused.toFixed(3).padStart(12)}  ${`${s.compileMs.p50.toFixed(2)} / ${s.compileMs.p99.toFixed(2)}`.padStart(18)}  ${`${s.maskMs.p50.toFixed(3)} / ${s.maskMs.p99.toFixed(2)}`.padStart(15)}`,
    );
  for (const [name, rs] of [...bySource].sort()) row(name, summarise(rs));
  row('total', summarise(results));
}

/** Why schemas were refused, by the keyword the error names. */
function refusals(results: SchemaResult[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of results) {
    if (r.compiled || r.error === undefined) continue;
    const m = /does not support (format "[^"]+"|"[^"]+")/.exec(r.error) ?? /(lookahead|lookbehind|backreferences|word-boundary|too large)/.exec(r.error) ?? /^[^:]*: (.{0,50})/.exec(r.error);
    const key = m?.[1] ?? r.error.slice(0, 50);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  const dir = resolve(process.argv[2] ?? join(here, '..', '..', 'shared', 'jsonschemabench'));
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f));
  console.log(`JSONSchemaBench: ${files.length} schemas from ${dir}; vocabulary ${VOCAB.toLocaleString('en')} tokens (synthetic byte-level); masks timed on ${MASKED} valid instance(s) per schema`);
  console.log(`machine: ${cpus()[0]?.model ?? '?'} x${cpus().length}, load average ${loadavg()[0]!.toFixed(1)}; ${SHARDS} child process(es) per engine at once`);
  const weft = await runEngine('weft', files);
  printTable('weft (weft/guided compileJsonSchema, TS automaton)', weft);
  console.log('\nweft refusals by keyword:', refusals(weft).slice(0, 15).map(([k, n]) => `${k} ${n}`).join('; '));
  const misses = weft.filter((r) => r.compiled && r.validAccepted < r.valid);
  console.log(`weft: ${misses.length} compiled schemas refused some valid instance; first ones:`);
  for (const r of misses.slice(0, 12)) console.log(`  ${r.file}: ${r.validAccepted}/${r.valid}  ${r.misses?.[0] ?? ''}`);
  const out: Record<string, unknown> = { ...summarise(weft) };
  console.log(`weft summary: ${JSON.stringify(out)}`);
  const wanted = (name: string): boolean => process.env.ENGINES === undefined || process.env.ENGINES.split(',').includes(name);
  const common: Record<string, unknown> = {};
  const peer = async (name: string, title: string, available: boolean, missing: string): Promise<void> => {
    if (!wanted(name)) return void (out[name] = { skipped: `ENGINES=${process.env.ENGINES}` });
    if (!available) {
      console.log(`\n${name}: not run, ${missing}; to run it: ${PEERS_HOWTO}`);
      return void (out[name] = { skipped: `${missing}; ${PEERS_HOWTO}` });
    }
    const results = await runEngine(name, files);
    printTable(title, results);
    console.log(`\n${name} refusals:`, refusals(results).slice(0, 10).map(([k, n]) => `${k} ${n}`).join('; '));
    out[name] = summarise(results);
    console.log(`${name} summary: ${JSON.stringify(out[name])}`); // kept even if a later engine does not finish
    // The same fractions on the schemas both weft and this peer compile.
    const weftCompiled = new Set(weft.filter((r) => r.compiled).map((r) => r.file));
    const both = new Set(results.filter((r) => r.compiled && weftCompiled.has(r.file)).map((r) => r.file));
    const on = (rs: SchemaResult[]): Summary => summarise(rs.filter((r) => both.has(r.file)));
    common[name] = { schemas: both.size, weft: { validAccepted: on(weft).validAccepted, invalidRefused: on(weft).invalidRefused }, [name]: { validAccepted: on(results).validAccepted, invalidRefused: on(results).invalidRefused } };
  };
  await peer('llguidance', 'llguidance 1.9.1 (Rust, bench/guided-engines binding)', existsSync(llguidanceBinary), `no ${llguidanceBinary}`);
  await peer('xgrammar', 'xgrammar 0.1.27 (@mlc-ai/web-xgrammar, WASM)', existsSync(xgrammarPackage), `@mlc-ai/web-xgrammar is not installed in bench/guided-engines`);
  out.commonSchemas = common;
  console.log(JSON.stringify(out));
}

if (process.env.JSB_CHILD !== undefined) await child(process.env.JSB_CHILD, JSON.parse(process.env.JSB_FILES!) as string[], Number(process.env.JSB_START));
else await main();
