/**
 * Graceful shutdown: new work is refused (503), running requests finish within
 * the deadline, the rest are cancelled at it, and the pipeline stays usable.
 */

import { describe, expect, it } from 'vitest';
import { demoPresent, sseEvents, startDemoServer } from './harness.js';

describe.skipIf(!demoPresent)('WeftServer.close', () => {
  const longBody = JSON.stringify({ model: 'weft-demo', prompt: 'Once upon a time', max_tokens: 3500, ignore_eos: true, stream: true });
  const shortBody = JSON.stringify({ model: 'weft-demo', prompt: 'Once upon a time', max_tokens: 8 });

  it('lets short requests finish, cancels long ones at the deadline, refuses new ones', async () => {
    const s = await startDemoServer();
    try {
      const url = `${s.server.url}/v1/completions`;
      const long = fetch(url, { method: 'POST', body: longBody }).then(async (r) => ({ status: r.status, text: await r.text() }));
      // Wait for the long one to be running.
      while (s.pipe.stats().running === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const short = fetch(url, { method: 'POST', body: shortBody });
      while (s.server.activeRequests < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = Date.now();
      const closed = s.server.close(300);
      const refused = await fetch(`${s.server.url}/health`).catch((error: Error) => error);
      // Either refused at the socket (no longer listening) or answered 503.
      if (!(refused instanceof Error)) expect(refused.status).toBe(503);
      const shortAnswer = await short;
      expect(shortAnswer.status).toBe(200);
      await closed;
      expect(Date.now() - started).toBeLessThan(5_000);
      const longAnswer = await long;
      expect(longAnswer.status).toBe(200);
      const events = sseEvents(longAnswer.text) as { error?: { code: string } }[];
      // Cancelled at the deadline: its stream ends with an error event saying why.
      expect(events.at(-1)?.error?.code).toMatch(/aborted|pipeline_closed/);
      expect(s.pipe.stats().running).toBe(0);
      expect(s.pipe.stats().kv.pools[0]!.usedBlocks).toBe(0);
      // The pipeline is the caller's: still usable.
      expect((await s.pipe.generate('Hello', { maxTokens: 2 })).usage.completionTokens).toBe(2);
    } finally {
      await s.close();
    }
  });
});
