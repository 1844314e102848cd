/**
 * Tool-guided "auto": what free text costs per token, over a 151,936-token synthetic byte-level
 * vocabulary (Qwen's size, test/guided/synthetic-vocabulary.ts), hermes grammar with the demo's
 * five tools.
 *
 *   npm run bench:guided-free-text
 *
 * 1. A cold free-text mask (a state first seen): a free run over the guard bytes (only tokens holding a
 *    trigger's last byte are run through the automaton) vs the trie walk every other state uses
 *    (the same frames with their free run and guard bytes hidden). Alternating runs, medians; the masks are
 *    checked equal.
 * 2. Per token in free text: the check the engine does after an unmasked draw (the token's bytes
 *    through the automaton) vs filling a cached mask and applying it to a logits row (what a
 *    masked state costs before its draw).
 */
import { cpus, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { END_STACK, Frame, Stack, type Step } from '../src/guided/automaton.js';
import { toolCallsStart } from '../src/guided/call-modes.js';
import { toolGrammarOf } from '../src/tool-formats/registry.js';
import { CompiledGrammar, applyMask } from '../src/guided/grammar.js';
import type { ToolDefinition } from '../src/text/types.js';
import { syntheticVocabulary } from '../test/guided/synthetic-vocabulary.js';

const VOCAB = 151_936;
const ROUNDS = 7;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const tools = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'models', 'weft-demo', 'tools.json'), 'utf8')) as ToolDefinition[];
const { vocabulary, endToken } = syntheticVocabulary(VOCAB, 7);

/** The same frame with no free run or guard bytes, so the mask is a trie walk. */
class Walked extends Frame {
  readonly key: string;
  constructor(readonly inner: Frame) {
    super();
    this.key = `walked:${inner.key}`;
  }
  override get canPop(): boolean {
    return this.inner.canPop;
  }
  step(byte: number): Step {
    return this.inner.step(byte);
  }
}

const freshGrammar = (): CompiledGrammar => new CompiledGrammar(vocabulary, new Stack(toolCallsStart({ parser: 'hermes', grammar: toolGrammarOf('hermes'), tools, choice: 'auto', parallel: true, reasoning: 'none', reasoningExits: [] }), END_STACK));
// The vocabulary's tables (text tokens, and the tokens holding each guard set's bytes) are built once per vocabulary and guard set.
let started = performance.now();
freshGrammar().maskOf(freshGrammar().start);
const tablesMs = performance.now() - started;
const guardMs: number[] = [];
const walkMs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const walked of round % 2 === 0 ? [false, true] : [true, false]) {
    const grammar = freshGrammar();
    const state = walked ? new Stack(new Walked(grammar.start.frame), END_STACK) : grammar.start;
    const started = performance.now();
    grammar.maskOf(state);
    (walked ? walkMs : guardMs).push(performance.now() - started);
  }
}
{
  const grammar = freshGrammar();
  const a = grammar.maskOf(grammar.start);
  const b = freshGrammar().maskOf(new Stack(new Walked(grammar.start.frame), END_STACK));
  if (a.some((word, i) => word !== b[i])) throw new Error('the guard-byte mask differs from the walked one');
}

// Per token: check a drawn token vs fill + apply a (cached) mask.
const grammar = freshGrammar();
const matcher = grammar.matcher([endToken]);
const mask = new Uint32Array(grammar.maskWords);
const logits = new Float32Array(VOCAB);
matcher.fillMask(mask); // warm the cache
const tokens = Array.from({ length: 1000 }, (_, i) => (i * 7919) % (VOCAB - 1));
const checkUs: number[] = [];
const maskUs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  started = performance.now();
  let allowed = 0;
  for (const t of tokens) if (matcher.allows(t)) allowed++;
  checkUs.push(((performance.now() - started) * 1000) / tokens.length);
  started = performance.now();
  for (let i = 0; i < 100; i++) {
    matcher.fillMask(mask);
    applyMask(logits, 0, VOCAB, mask);
  }
  maskUs.push(((performance.now() - started) * 1000) / 100);
  if (allowed === 0) throw new Error('no token allowed');
}

console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} threads), load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`vocabulary ${VOCAB} tokens, ${vocabulary.numNodes} trie nodes; hermes auto grammar, demo tools; ${ROUNDS} alternating rounds, medians`);
console.log(`once per vocabulary and format: tables ${tablesMs.toFixed(1)} ms`);
console.log(`cold free-text mask: free run ${median(guardMs).toFixed(2)} ms, trie walk ${median(walkMs).toFixed(2)} ms (walk / free run = ${(median(walkMs) / median(guardMs)).toFixed(1)}x)`);
console.log(`per free-text token: check the drawn token ${median(checkUs).toFixed(3)} us, fill + apply a cached mask ${median(maskUs).toFixed(1)} us (${(median(maskUs) / median(checkUs)).toFixed(0)}x)`);
