/**
 * What the text sandbox adds per request: encoding a short prompt and
 * rendering a short chat in the sandbox's worker process (IPC both ways)
 * against the same tokenizer and template on the main thread. Alternating
 * rounds, medians. Run: npx tsx bench/text-sandbox.bench.ts [modelDir]
 */

import { cpus } from 'node:os';
import { loadText } from '../src/text/load-text.js';
import { TextSandbox } from '../src/text/sandbox/text-sandbox.js';

const modelDir = process.argv[2] ?? new URL('../models/weft-demo/', import.meta.url).pathname;
const ROUNDS = 7;
const CALLS = 200;
const prompt = 'What is the weather in Paris today? Please answer in one short sentence.';
const messages = [
  { role: 'system' as const, content: 'You are a helpful assistant.' },
  { role: 'user' as const, content: prompt },
];

const text = await loadText(modelDir);
const sandbox = new TextSandbox(text.source);
await sandbox.encode('warm up', true); // starts the worker process (not counted)

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function timeCalls(call: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await call();
  return ((performance.now() - start) / CALLS) * 1000; // microseconds per call
}

const results: Record<string, number[]> = { encodeInline: [], encodeSandbox: [], chatInline: [], chatSandbox: [] };
for (let round = 0; round < ROUNDS; round++) {
  results.encodeInline!.push(await timeCalls(() => text.tokenizer.encode(prompt)));
  results.encodeSandbox!.push(await timeCalls(() => sandbox.encode(prompt, true)));
  if (text.chatTemplate) {
    results.chatInline!.push(await timeCalls(() => text.tokenizer.encode(text.chatTemplate!.render(messages), { addSpecialTokens: false })));
    results.chatSandbox!.push(await timeCalls(async () => sandbox.encode(await sandbox.render(messages, {}, Infinity), false)));
  }
}
await sandbox.close();

const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.length ? median(v) : NaN]));
console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'}; model: ${modelDir}; ${ROUNDS} alternating rounds x ${CALLS} calls, medians`);
console.log(`encode short prompt: inline ${m.encodeInline!.toFixed(1)} us, sandbox ${m.encodeSandbox!.toFixed(1)} us (+${(m.encodeSandbox! - m.encodeInline!).toFixed(1)} us)`);
if (text.chatTemplate) {
  console.log(`render + encode short chat: inline ${m.chatInline!.toFixed(1)} us, sandbox ${m.chatSandbox!.toFixed(1)} us (+${(m.chatSandbox! - m.chatInline!).toFixed(1)} us)`);
}
