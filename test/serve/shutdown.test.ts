/**
 * Graceful shutdown: new work is refused (503), running requests finish within
 * the deadline, the rest are cancelled at it, and the pipeline stays usable.
 * A test backend with a fixed step time makes "short" and "long" certain.
 */

import { describe, expect, it } from 'vitest';
import { Pipeline, WeftServer } from '../../src/index.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';
import { sseEvents } from './harness.js';

describe('WeftServer.close', () => {
  it('lets short requests finish, cancels long ones at the deadline, refuses new ones', async () => {
    // 10 ms a step: 8 tokens take ~0.1 s, 3000 take 30 s.
    const pipe = await Pipeline.create({ backend: new TestBackend({ delayMs: 10, eosPercent: 0 }), tokenizer: new ByteTokenizer() });
    const server = await WeftServer.start({ pipeline: pipe, modelName: 'test', port: 0 });
    try {
      const url = `${server.url}/v1/completions`;
      const long = fetch(url, { method: 'POST', body: JSON.stringify({ prompt: 'abc', max_tokens: 3000, stream: true }) }).then(async (r) => ({
        status: r.status,
        text: await r.text(),
      }));
      while (pipe.stats().running === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const short = fetch(url, { method: 'POST', body: JSON.stringify({ prompt: 'abc', max_tokens: 8 }) });
      while (server.activeRequests < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = Date.now();
      const closed = server.close(2_000);
      const refused = await fetch(`${server.url}/health`).catch((error: Error) => error);
      // Either refused at the socket (no longer listening) or answered 503 on a kept-alive connection.
      if (!(refused instanceof Error)) expect(refused.status).toBe(503);
      const shortAnswer = await short;
      expect(shortAnswer.status).toBe(200);
      expect(((await shortAnswer.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
      await closed;
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(1_950);
      expect(elapsed).toBeLessThan(10_000);
      const longAnswer = await long;
      expect(longAnswer.status).toBe(200);
      const events = sseEvents(longAnswer.text) as { error?: { code: string } }[];
      // Cancelled at the deadline: its stream ends with an error event saying why.
      expect(events.at(-1)?.error?.code).toMatch(/aborted|pipeline_closed/);
      expect(pipe.stats().running).toBe(0);
      expect(pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
      // The pipeline is the caller's: still usable.
      expect((await pipe.generate('abc', { maxTokens: 2 })).usage.completionTokens).toBe(2);
    } finally {
      await server.close(0);
      await pipe.close();
    }
  });
});
