/**
 * Guided generation's cost per step, and its grammars' compile time.
 *
 *   npm run bench:guided
 *
 * 1. Step cost at batch 16 with a 151,936-token vocabulary (Qwen's size): a random-weight Qwen3
 *    model (hidden 256, 2 layers, that vocabulary) on weft's CPU backend, with a synthetic
 *    byte-level tokenizer over a synthetic vocabulary (test/guided/synthetic-vocabulary.ts).
 *    16 requests decode at once, all guided by one JSON schema (the demo calculator's arguments,
 *    strings bounded) or all unguided; rounds alternate guided / unguided and the medians of the
 *    engine's step times are compared. The mask work is also timed on its own (filling the 16
 *    masks, applying them to 16 rows of logits), as a fraction of the unguided step.
 * 2. Cold masks (a state's first mask) at that vocabulary, in the states where nearly every token
 *    is allowed: the free-run path (free-runs.ts: a precomputed token class plus a walk of the other
 *    tokens) against the full trie walk it replaced, alternating, medians of wall and CPU time.
 * 3. Compile time of the demo model's tool grammars (models/weft-demo/tools.json) over its own
 *    vocabulary: JSON schema -> automaton, and the first mask of each state (cold) vs cached.
 */
import { readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { CpuBackend, loadText, Pipeline } from '../src/index.js';
import type { StepInfo } from '../src/engine/engine.js';
import { Guide } from '../src/guided/guide.js';
import { END_STACK, Stack, type Frame } from '../src/guided/automaton.js';
import { applyMask, CompiledGrammar, walkTrie } from '../src/guided/grammar.js';
import { valueStart } from '../src/guided/json-frames.js';
import { anyObjectSpec, compileSchema } from '../src/guided/json-schema.js';
import { noCallStart, toolCallsStart } from '../src/guided/call-modes.js';
import { toolGrammarOf } from '../src/tool-formats/registry.js';
import type { Tokenizer, ToolDefinition } from '../src/text/types.js';
import { writeRandomModel } from '../test/native/random-model.js';
import { syntheticVocabulary } from '../test/guided/synthetic-vocabulary.js';

const VOCAB = 151_936;
const BATCH = 16;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A byte-level tokenizer over the synthetic vocabulary: token strings in GPT-2's byte-to-unicode form. */
function syntheticTokenizer(tokenBytes: readonly (Uint8Array | null)[], eos: number): Tokenizer {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const charOf = new Map<number, string>();
  let n = 0;
  for (let b = 0; b < 256; b++) charOf.set(b, String.fromCodePoint(printable.includes(b) ? b : 256 + n++));
  const decoder = new TextDecoder();
  return {
    vocabSize: VOCAB,
    bosTokenId: undefined,
    eosTokenIds: [eos],
    encode: (text) => [...new TextEncoder().encode(text)],
    decode: (ids) => decoder.decode(Uint8Array.from(ids.flatMap((id) => [...(tokenBytes[id] ?? [])]))),
    tokenToId: () => undefined,
    idToToken: (id) => (id === eos ? '<|end|>' : tokenBytes[id] ? [...tokenBytes[id]!].map((b) => charOf.get(b)!).join('') : undefined),
  };
}

const demoDir = join(import.meta.dirname, '..', 'models', 'weft-demo');
const tools = JSON.parse(readFileSync(join(demoDir, 'tools.json'), 'utf8')) as ToolDefinition[];
const calculatorArgs = tools.find((t) => t.function.name === 'calculator')!.function.parameters!;

/**
 * The schema with issue 30's keywords in use: bounded integer and number, minLength, a date, a
 * nullable union, a pattern, and a oneOf told apart by a const tag (with patterns and bounds inside).
 */
const featuresSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 40 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    start: { type: 'string', format: 'date' },
    budget: { anyOf: [{ type: 'number', exclusiveMinimum: 0, maximum: 10000 }, { type: 'null' }] },
    code: { type: 'string', pattern: '^[A-Z]{3}-\\d{2,4}$' },
    travel: {
      oneOf: [
        { type: 'object', properties: { mode: { const: 'train' }, carriage: { type: 'integer', minimum: 1, maximum: 12 } }, required: ['mode'] },
        { type: 'object', properties: { mode: { const: 'plane' }, seat: { type: 'string', pattern: '^\\d{1,2}[A-F]$' } }, required: ['mode'] },
      ],
    },
  },
  required: ['city', 'days', 'start', 'budget', 'code', 'travel'],
};
const featuresText = '{"city": "Lisbon", "days": 3, "start": "2026-05-01", "budget": 1250.5, "code": "LIS-042", "travel": {"mode": "plane", "seat": "12C"}}';

/** Step cost at batch 16, guided by `schema`; the mask work alone along `text` (valid for it). */
async function stepCost(schema: Record<string, unknown>, sample: string): Promise<Record<string, number | string>> {
  const demoConfig = JSON.parse(readFileSync(join(demoDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const config = { ...demoConfig, vocab_size: VOCAB, hidden_size: 256, intermediate_size: 512, num_hidden_layers: 2, head_dim: 64, num_attention_heads: 4, num_key_value_heads: 2, eos_token_id: VOCAB - 1 };
  const { dir } = writeRandomModel(config, 5);
  const { vocabulary, endToken } = syntheticVocabulary(VOCAB, 7);
  const backend = await CpuBackend.load(dir);
  rmSync(dir, { recursive: true, force: true });
  const tokenizer = syntheticTokenizer(vocabulary.tokenBytes, endToken);
  const pipe = await Pipeline.create({ backend, tokenizer, kvCache: { size: '256MiB' } });
  const steps: number[] = [];
  pipe.on('step', (info: StepInfo) => {
    if (info.scheduledRequests === BATCH && info.scheduledTokens === BATCH) steps.push(info.durationMs);
  });
  const round = async (guided: boolean, seed: number): Promise<number[]> => {
    steps.length = 0;
    await Promise.all(
      Array.from({ length: BATCH }, (_, i) =>
        pipe.generate(`request ${i}: `, {
          temperature: 1,
          seed: seed * 100 + i,
          maxTokens: 24,
          ignoreEos: !guided,
          ...(guided && { responseFormat: { type: 'json_schema' as const, schema } }),
        }),
      ),
    );
    return steps.slice(2); // the first decode steps still fill caches
  };
  await round(true, 0); // the vocabulary trie and first masks
  await round(false, 0);
  const guidedSteps: number[] = [];
  const plainSteps: number[] = [];
  for (let r = 1; r <= 6; r++) {
    guidedSteps.push(...(await round(true, r)));
    plainSteps.push(...(await round(false, r)));
  }
  const pipelineGrammar = (pipe as unknown as { guide: Guide }).guide.grammarFor({ responseFormat: { type: 'json_schema', schema }, tools: [], reasoning: 'none' })!;
  console.log(`in the pipeline: ${pipelineGrammar.walks} cold masks (${pipelineGrammar.walkMs.toFixed(0)} ms), ${pipelineGrammar.hits} cached`);
  await pipe.close();

  // The mask work alone: 16 matchers at states a sampled walk reaches, filled and applied.
  const guide = new Guide(tokenizer, VOCAB, toolGrammarOf);
  const grammar = guide.grammarFor({ responseFormat: { type: 'json_schema', schema }, tools: [], reasoning: 'none' })!;
  const text = new TextEncoder().encode(sample);
  const matchers = Array.from({ length: BATCH }, () => grammar.matcher([endToken]));
  const masks = Array.from({ length: BATCH }, () => new Uint32Array((VOCAB + 31) >>> 5));
  const logits = new Float32Array(BATCH * VOCAB).map((_, i) => Math.sin(i));
  const fill: number[] = [];
  const apply: number[] = [];
  for (let pos = 0; pos < text.length; pos++) {
    let t = performance.now();
    for (let i = 0; i < BATCH; i++) matchers[i]!.fillMask(masks[i]!);
    fill.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < BATCH; i++) applyMask(logits, i * VOCAB, VOCAB, masks[i]!);
    apply.push(performance.now() - t);
    for (const m of matchers) if (!m.acceptToken(text[pos]!)) throw new Error(`the sample is refused at byte ${pos}`); // ids 0-255 are the bytes
  }
  // The first string mask of a new pipeline: a cold mask plus the one-time sorting of the vocabulary
  // into the free-string token class (free-runs.ts); later cold string masks: the table above.
  const fresh = new Guide(tokenizer, VOCAB, toolGrammarOf).grammarFor({ responseFormat: { type: 'json_object' }, tools: [], reasoning: 'none' })!;
  const inString = fresh.matcher([endToken]);
  for (const b of new TextEncoder().encode('{"k')) inString.acceptToken(b);
  let t0 = performance.now();
  inString.fillMask(masks[0]!);
  const firstStringMaskOfPipelineMs = performance.now() - t0;
  t0 = performance.now();
  inString.fillMask(masks[0]!);
  const warmStringMaskMs = performance.now() - t0;
  const plain = median(plainSteps);
  return {
    stepMsUnguided: +plain.toFixed(2),
    stepMsGuided: +median(guidedSteps).toFixed(2),
    guidedOverUnguided: +(median(guidedSteps) / plain).toFixed(3),
    maskFillMsPerStep: +median(fill).toFixed(3),
    maskApplyMsPerStep: +median(apply).toFixed(3),
    maskWorkFractionOfStep: +((median(fill) + median(apply)) / plain).toFixed(4),
    serialMaskFractionOfStep: +(median(apply) / plain).toFixed(4),
    firstStringMaskOfPipelineMs: +firstStringMaskOfPipelineMs.toFixed(2),
    warmStringMaskMs: +warmStringMaskMs.toFixed(3),
    trieNodes: fresh.vocabulary.numNodes,
    steps: `${guidedSteps.length} guided, ${plainSteps.length} unguided`,
  };
}

/** Cold masks: free-run path vs the full trie walk, in the same states, alternating. */
function coldMasks(): Record<string, unknown> {
  const { vocabulary, endToken } = syntheticVocabulary(VOCAB, 7);
  const encoder = new TextEncoder();
  const json = (schema: unknown) => () => valueStart(compileSchema(schema, 'schema'));
  const states: [string, () => Frame, string][] = [
    ['json_object key', () => valueStart(anyObjectSpec()), '{"k'],
    ['json_object value', () => valueStart(anyObjectSpec()), '{"k": "v'],
    ['string maxLength 64', json({ type: 'array', items: { type: 'string', maxLength: 64 } }), '["abc'],
    ['toolChoice none text', () => noCallStart(toolGrammarOf('hermes'), 'none'), 'Hello'],
    ['reasoning text', () => toolCallsStart({ parser: 'hermes', grammar: toolGrammarOf('hermes'), tools: [{ type: 'function', function: { name: 'f' } }], choice: 'required', parallel: false, reasoning: 'open', reasoningExits: [] }), 'Let me'],
  ];
  // One-time per vocabulary and class: sorting the tokens (built on a string state's first mask).
  const indexBuild: Record<string, number> = {};
  const out: Record<string, unknown> = {};
  const mask = new Uint32Array((VOCAB + 31) >>> 5);
  const cpuMs = (f: () => void): [number, number] => {
    const c = process.cpuUsage();
    const t = performance.now();
    f();
    const wall = performance.now() - t;
    const d = process.cpuUsage(c);
    return [wall, (d.user + d.system) / 1000];
  };
  for (const [name, start, prefix] of states) {
    const fast: number[][] = [[], []];
    const full: number[][] = [[], []];
    let allowed = 0;
    for (let round = 0; round < 7; round++) {
      const grammar = new CompiledGrammar(vocabulary, new Stack(start(), END_STACK));
      const matcher = grammar.matcher([endToken]);
      for (const b of encoder.encode(prefix)) matcher.acceptToken(b);
      const state = (matcher as unknown as { states: Stack[] }).states.at(-1)!;
      const [w1, c1] = cpuMs(() => matcher.fillMask(mask)); // the grammar is fresh: a cold mask
      allowed = mask.reduce((n, w) => n + popcount(w), 0);
      const [w2, c2] = cpuMs(() => walkTrie(vocabulary.trie, state, mask.fill(0)));
      if (round === 0) {
        indexBuild[name] = w1; // the first one also sorts the vocabulary into the class
        continue;
      }
      fast[0]!.push(w1), fast[1]!.push(c1), full[0]!.push(w2), full[1]!.push(c2);
    }
    out[name] = {
      allowedTokens: allowed,
      fullWalkMs: +median(full[0]!).toFixed(2),
      freeRunMs: +median(fast[0]!).toFixed(3),
      fullWalkCpuMs: +median(full[1]!).toFixed(2),
      freeRunCpuMs: +median(fast[1]!).toFixed(3),
      speedup: +(median(full[1]!) / Math.max(median(fast[1]!), 0.001)).toFixed(1),
      firstWithIndexBuildMs: +indexBuild[name]!.toFixed(1),
    };
  }
  return out;
}

const popcount = (w: number): number => {
  let n = 0;
  for (let x = w >>> 0; x !== 0; x &= x - 1) n++;
  return n;
};

async function compileTimes(): Promise<Record<string, number>> {
  const { tokenizer } = await loadText(demoDir);
  const guide = new Guide(tokenizer, 1536, toolGrammarOf);
  let t = performance.now();
  guide.vocab();
  const vocabMs = performance.now() - t;
  t = performance.now();
  const required = guide.grammarFor({ toolChoice: 'required', tools, toolParser: 'qwen3coder', reasoning: 'optional' })!;
  const compileRequiredMs = performance.now() - t;
  t = performance.now();
  for (const tool of tools) guide.grammarFor({ responseFormat: { type: 'json_schema', schema: tool.function.parameters! }, tools: [], reasoning: 'none' });
  const compileSchemasMs = performance.now() - t;
  // First masks (cold: one trie walk each) along a real call, then the same again (cached).
  const call = '<tool_call>\n<function=calculator>\n<parameter=operation>\nmultiply\n</parameter>\n<parameter=a>\n37\n</parameter>\n<parameter=b>\n12.5\n</parameter>\n</function>\n</tool_call>';
  const ids = tokenizer.encode(call, { addSpecialTokens: false });
  const mask = new Uint32Array(48);
  const walk = (): number => {
    const m = required.matcher([1486]);
    const start = performance.now();
    for (const id of ids) {
      m.fillMask(mask);
      m.acceptToken(id);
    }
    return (performance.now() - start) / ids.length;
  };
  const cold = walk();
  const warm = walk();
  return {
    demoVocabularyMs: +vocabMs.toFixed(2),
    compileRequiredQwen3coderMs: +compileRequiredMs.toFixed(3),
    compileFiveToolSchemasMs: +compileSchemasMs.toFixed(3),
    firstMaskMsPerToken: +cold.toFixed(4),
    cachedMaskMsPerToken: +warm.toFixed(4),
  };
}

console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, load ${loadavg()[0]!.toFixed(2)}`);
const cold = coldMasks();
console.log(`cold masks at ${VOCAB} tokens (free-run path vs full trie walk, medians of 6, wall and CPU ms):`);
console.table(cold);
const compile = await compileTimes();
console.log('demo model tool grammars:', compile);
const cost = { calculator: await stepCost(calculatorArgs, '{"operation": "multiply", "a": 37, "b": 12.5}'), issue30Features: await stepCost(featuresSchema, featuresText) };
console.log(`batch ${BATCH}, vocabulary ${VOCAB}:`, cost);
console.log(JSON.stringify({ cold, compile, cost }));
