// Mutated real model files (the demo model's): every load either works or fails with a
// WeftError, in bounded time, and a pipeline that loads still answers. No crash, no hang.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Pipeline, WeftError } from '../../src/index.js';
import { demoModelPath } from '../../src/package-files.js';

/** Mutated folders to try: 40 in CI; `npm run fuzz` sets WEFT_FUZZ_LOADS=2000. */
const LOADS = Number(process.env.WEFT_FUZZ_LOADS ?? 40);
const TARGETS = ['config.json', 'tokenizer_config.json', 'generation_config.json', 'tokenizer.json', 'model.safetensors'] as const;

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** One mutation of `bytes`: flipped bytes, a cut, a splice of JSON-ish noise, or a duplicated span. */
function mutate(bytes: Buffer, random: () => number, headerEnd: number): Buffer {
  const out = Buffer.from(bytes);
  const span = Math.min(out.length, headerEnd); // where the structure is (all of a JSON file; a safetensors header)
  const at = () => Math.floor(random() * span);
  switch (Math.floor(random() * 4)) {
    case 0:
      for (let i = 0, n = 1 + Math.floor(random() * 8); i < n; i++) out[at()] = Math.floor(random() * 256);
      return out;
    case 1:
      return out.subarray(0, at());
    case 2: {
      const noise = ['{', '}', '[', ']', '"', ',', ':', '-1', '1e309', '99999999999', 'null', '\\u0000', '\u{10ffff}'];
      const pos = at();
      return Buffer.concat([out.subarray(0, pos), Buffer.from(noise[Math.floor(random() * noise.length)]!), out.subarray(pos)]);
    }
    default: {
      const from = at();
      const to = Math.min(span, from + Math.floor(random() * 64));
      const pos = at();
      return Buffer.concat([out.subarray(0, pos), out.subarray(from, to), out.subarray(pos)]);
    }
  }
}

it(`${LOADS} mutated model folders load or fail typed; loaded ones still generate`, async () => {
  const random = seeded(20261201);
  const originals = new Map(TARGETS.map((name) => [name, readFileSync(join(demoModelPath(), name))]));
  const safetensors = originals.get('model.safetensors')!;
  const headerEnd = 8 + Number(safetensors.readBigUInt64LE(0));
  const dir = mkdtempSync(join(tmpdir(), 'weft-fuzz-'));
  cpSync(demoModelPath(), dir, { recursive: true });
  const outcomes = { loaded: 0, refused: 0 };
  try {
    for (let i = 0; i < LOADS; i++) {
      const name = TARGETS[Math.floor(random() * TARGETS.length)]!;
      const original = originals.get(name)!;
      writeFileSync(join(dir, name), mutate(original, random, name === 'model.safetensors' ? headerEnd : original.length));
      const started = performance.now();
      try {
        const pipe = await Pipeline.create({ model: dir, kvCache: { size: '2MB' }, threads: 1 });
        try {
          outcomes.loaded++;
          await pipe.generate('Hello', { maxTokens: 2 }).catch((error: unknown) => expect(error).toBeInstanceOf(WeftError));
        } finally {
          await pipe.close();
        }
      } catch (error) {
        if (!(error instanceof WeftError)) throw new Error(`mutation ${i} of ${name}: untyped ${String(error)}`, { cause: error });
        outcomes.refused++;
      }
      expect(performance.now() - started, `mutation ${i} of ${name}`).toBeLessThan(15_000);
      writeFileSync(join(dir, name), original);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`loader fuzz: ${LOADS} mutated folders, ${outcomes.loaded} loaded, ${outcomes.refused} refused with a WeftError`);
  expect(outcomes.loaded + outcomes.refused).toBe(LOADS);
}, 600_000);
