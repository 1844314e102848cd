/** Builds pipelines over the test backend and computes expected outputs independently of the engine. */

import { Pipeline } from '../../src/create.js';
import type { PipelineOptions } from '../../src/pipeline/options.js';
import { kvBytesPerBlock } from '../../src/engine/kv/sizing.js';
import { ByteTokenizer, EOS } from './byte-tokenizer.js';
import { TestBackend, type TestBackendOptions } from './test-backend.js';

export interface Harness {
  pipe: Pipeline;
  backend: TestBackend;
  tokenizer: ByteTokenizer;
  /** Greedy output of the prompt run alone, straight from the backend's rule. */
  expected(prompt: string, maxTokens: number, ignoreEos?: boolean): number[];
}

export async function harness(
  options: { blocks?: number; blockSize?: number; backend?: TestBackendOptions } & Omit<PipelineOptions, 'backend' | 'tokenizer' | 'isolation'> = {},
): Promise<Harness> {
  const { blocks = 1000, blockSize = 4, backend: backendOptions, ...rest } = options;
  const backend = new TestBackend(backendOptions);
  const tokenizer = new ByteTokenizer();
  const size = blocks * kvBytesPerBlock(backend.shape, 'f32', blockSize);
  const pipe = await Pipeline.create({
    ...rest,
    backend,
    tokenizer,
    kvCache: { size, blockSize, ...rest.kvCache },
  });
  return {
    pipe,
    backend,
    tokenizer,
    expected(prompt, maxTokens, ignoreEos = false) {
      const context = tokenizer.encode(prompt);
      const out: number[] = [];
      while (out.length < maxTokens) {
        const next = backend.nextToken(context);
        out.push(next);
        context.push(next);
        if (next === EOS && !ignoreEos) break;
      }
      return out;
    },
  };
}

/** Distinct prompts; with `sharedPrefix` they all start with the same long text. */
export function prompts(count: number, sharedPrefix = ''): string[] {
  return Array.from({ length: count }, (_, i) => `${sharedPrefix}prompt number ${i}: ${'xyz'.repeat(i % 4)}`);
}
