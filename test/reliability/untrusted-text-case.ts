/**
 * One hostile model-folder case, run in a child process by untrusted-text.test.ts
 * (so that a case that kills or freezes the process fails that test instead of
 * taking the test runner down). Prints one JSON line: the request's error code
 * (or "ok"), how long it took, the longest gap between 10 ms timer ticks while
 * it ran, and whether a normal request on the same pipeline worked afterwards.
 *
 * Usage: tsx untrusted-text-case.ts <case>
 */

import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pipeline, WeftError } from '../../src/index.js';

const DEMO = new URL('../../models/weft-demo/', import.meta.url).pathname;

/** A template that misbehaves only when asked (kwarg `evil`), so the same pipeline can show it recovers. */
const guarded = (evil: string): string =>
  `{%- if evil -%}${evil}{%- else -%}{%- for m in messages -%}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor -%}<|im_start|>assistant\n{%- endif -%}`;

const CASES: Record<string, { template?: string; splitRegex?: string; run(pipe: Pipeline): Promise<unknown> }> = {
  'range-bomb': { template: guarded('{%- for i in range(1000000000) -%}{%- endfor -%}'), run: (p) => evilChat(p) },
  'endless-loop': {
    template: guarded('{%- for a in range(1000) -%}{%- for b in range(1000) -%}{%- for c in range(1000) -%}{%- endfor -%}{%- endfor -%}{%- endfor -%}'),
    run: (p) => evilChat(p),
  },
  'huge-output': {
    template: guarded('{%- for a in range(20000) -%}{%- for b in range(20000) -%}xxxxxxxxxxxxxxxx{%- endfor -%}{%- endfor -%}'),
    run: (p) => evilChat(p),
  },
  'backtracking-regex': { splitRegex: '(a|aa)+$', run: (p) => p.generate(`${'a'.repeat(48)}b`, { maxTokens: 1 }) },
  'megabyte-prompt': { run: (p) => p.generate('word '.repeat(200_000), { maxTokens: 1 }) },
  'many-messages': { run: (p) => p.chat(Array.from({ length: 100_000 }, (_, i) => ({ role: 'user' as const, content: `message ${i}` })), { maxTokens: 1 }) },
};

function evilChat(pipe: Pipeline): Promise<unknown> {
  return pipe.chat([{ role: 'user', content: 'hi' }], { maxTokens: 1, templateKwargs: { evil: true } });
}

async function main(): Promise<void> {
  const name = process.argv[2]!;
  const spec = CASES[name];
  if (!spec) throw new Error(`unknown case ${name}`);
  const dir = await mkdtemp(join(tmpdir(), 'weft-untrusted-'));
  try {
    await cp(DEMO, dir, { recursive: true });
    if (spec.template !== undefined) await writeFile(join(dir, 'chat_template.jinja'), spec.template);
    if (spec.splitRegex !== undefined) {
      const tokenizer = JSON.parse(await readFile(join(dir, 'tokenizer.json'), 'utf8'));
      tokenizer.pre_tokenizer.pretokenizers[0].pattern.Regex = spec.splitRegex;
      await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
    }
    const pipe = await Pipeline.create({ model: dir, textSandbox: { timeoutMs: 1500, maxHeapMb: 128 } });
    let last = performance.now();
    let maxGapMs = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
    }, 10);
    const started = performance.now();
    let code = 'ok';
    try {
      await spec.run(pipe);
    } catch (error) {
      code = error instanceof WeftError ? error.code : `untyped ${String(error)}`;
    }
    const elapsedMs = performance.now() - started;
    clearInterval(ticker);
    // The same pipeline still serves a normal chat and a normal completion.
    const chat = await pipe.chat([{ role: 'user', content: 'hi' }], { maxTokens: 2, temperature: 0 });
    const completion = await pipe.generate('The weather', { maxTokens: 2, temperature: 0 });
    const recovered = chat.usage.completionTokens > 0 && completion.usage.completionTokens > 0;
    await pipe.close();
    console.log(JSON.stringify({ code, elapsedMs: Math.round(elapsedMs), maxGapMs: Math.round(maxGapMs), recovered }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
