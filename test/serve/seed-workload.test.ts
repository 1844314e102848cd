/**
 * The workload that took OVMS down (issue 10's seed), over HTTP against a real
 * `weft serve` process: 16 clients streaming long chat completions at once
 * into a KV cache that holds about two of them, max-num-seqs 16, 10% of the
 * clients resetting their sockets mid-stream and 10% timing out (some while
 * still queued), new requests arriving all the time for a bounded while.
 *
 * Asserted: the server never exits; every request that was not cut off
 * streams exactly the text it produces alone (greedy); at the end /metrics
 * shows no block in use and nothing running or waiting; the cache pressure was
 * real (preemptions happened); SIGTERM then stops it cleanly.
 */

import { request, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPresent, demoTools, spawnServe, type ServeProcess } from './harness.js';

const STORM_MS = Number(process.env.WEFT_SEED_WORKLOAD_MS ?? 25_000);
const CLIENTS = 16;
const QUESTIONS = [
  "What's the weather in Paris in fahrenheit? Also, convert 12 km to miles.",
  'What is 37 times 12.5?',
  'Schedule team standup on March 3 for 30 minutes with Ana and Ben, and remind me.',
  'What is the capital of Japan?',
  'Give me the forecast for Tokyo for the next 3 days.',
  "Divide 144 by 12. And what's the weather in Cape Town?",
];
const LENGTHS = [300, 500, 700];

/** What a client saw of one streamed reply, in arrival order. */
interface Seen {
  reasoning: string;
  content: string;
  toolCalls: string[];
  finish: string | null;
  chunks: number;
}

type Outcome = { kind: 'complete'; seen: Seen } | { kind: 'cut'; chunks: number } | { kind: 'error'; message: string };

describe.skipIf(!demoPresent)('the seed workload over HTTP', () => {
  const tools = demoPresent ? demoTools() : [];
  let serve: ServeProcess;

  beforeAll(async () => {
    // 4 MiB of the default f16 cache is about 136 blocks of 16 tokens: two replies of ~640 prompt + 300-700 generated tokens.
    serve = await spawnServe(['-m', 'models/weft-demo', '--threads', '2', '--kv-cache-size', '4MiB', '--max-num-seqs', '16', '--quiet']);
  }, 60_000);
  afterAll(() => {
    if (serve && serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });

  const body = (question: number, maxTokens: number): string =>
    JSON.stringify({
      model: 'weft-demo',
      messages: [{ role: 'user', content: QUESTIONS[question] }],
      tools,
      temperature: 0,
      max_tokens: maxTokens,
      ignore_eos: true, // long streams, whatever the model would say
      stream: true,
    });

  /** One streamed chat. `cut`: reset the socket after that many chunks; `deadlineMs`: give up (destroy) then. */
  function streamChat(payload: string, cut?: { afterChunks?: number; deadlineMs?: number }): Promise<Outcome> {
    return new Promise((resolve) => {
      const seen: Seen = { reasoning: '', content: '', toolCalls: [], finish: null, chunks: 0 };
      let settled = false;
      const settle = (outcome: Outcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      let req: ClientRequest | undefined;
      const timer =
        cut?.deadlineMs === undefined
          ? undefined
          : setTimeout(() => {
              req?.destroy();
              settle({ kind: 'cut', chunks: seen.chunks });
            }, cut.deadlineMs);
      req = request(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          buffer += text;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end).trim();
            buffer = buffer.slice(end + 2);
            if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
            const chunk = JSON.parse(event.slice(6)) as {
              choices: { delta: { content?: string; reasoning_content?: string; tool_calls?: { index: number; function: { arguments?: string } }[] }; finish_reason: string | null }[];
            };
            seen.chunks++;
            const choice = chunk.choices[0];
            if (choice) {
              seen.reasoning += choice.delta.reasoning_content ?? '';
              seen.content += choice.delta.content ?? '';
              for (const call of choice.delta.tool_calls ?? []) seen.toolCalls[call.index] = (seen.toolCalls[call.index] ?? '') + (call.function.arguments ?? '');
              seen.finish = choice.finish_reason ?? seen.finish;
            }
            if (cut?.afterChunks !== undefined && seen.chunks >= cut.afterChunks) {
              // A hard close: RST, no FIN, mid-stream.
              res.socket?.resetAndDestroy();
              settle({ kind: 'cut', chunks: seen.chunks });
              return;
            }
          }
        });
        res.on('end', () => settle(res.statusCode === 200 ? { kind: 'complete', seen } : { kind: 'error', message: `status ${res.statusCode}: ${buffer}` }));
        res.on('error', (error) => settle(settled ? { kind: 'cut', chunks: seen.chunks } : { kind: 'error', message: error.message }));
      });
      req.on('error', (error) => settle({ kind: 'error', message: error.message }));
      req.end(payload);
    });
  }

  async function metricValue(name: string): Promise<number> {
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(name));
    if (line === undefined) throw new Error(`no ${name} in /metrics`);
    return Number(line.split(' ').pop());
  }

  it('serves it without exiting, with solo-identical text for every request not cut off', async () => {
    // Each distinct request alone first: the reference text.
    const solo = new Map<string, Seen>();
    for (let q = 0; q < QUESTIONS.length; q++) {
      for (const length of LENGTHS) {
        const outcome = await streamChat(body(q, length));
        if (outcome.kind !== 'complete') throw new Error(`solo run failed: ${JSON.stringify(outcome)}`);
        expect(outcome.seen.finish).not.toBeNull();
        solo.set(`${q}/${length}`, outcome.seen);
      }
    }
    const totalBlocks = await metricValue('weft_kv_cache_blocks_total');
    // About two long requests' worth (each needs 60-85 blocks).
    expect(totalBlocks).toBeGreaterThan(90);
    expect(totalBlocks).toBeLessThan(200);

    let seed = 12345;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const results: { key: string; outcome: Outcome; plannedCut: boolean }[] = [];
    const until = Date.now() + STORM_MS;
    const client = async (): Promise<void> => {
      while (Date.now() < until) {
        const q = Math.floor(random() * QUESTIONS.length);
        const length = LENGTHS[Math.floor(random() * LENGTHS.length)]!;
        const roll = random();
        const cut = roll < 0.1 ? { afterChunks: 1 + Math.floor(random() * 200) } : roll < 0.2 ? { deadlineMs: 50 + Math.floor(random() * 3000) } : undefined;
        const outcome = await streamChat(body(q, length), cut);
        results.push({ key: `${q}/${length}`, outcome, plannedCut: cut !== undefined });
        // Arrivals keep coming: a short, random think time between requests.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 50)));
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));

    expect(serve.child.exitCode).toBeNull();
    const errors = results.filter((r) => r.outcome.kind === 'error');
    expect(errors).toEqual([]);
    const complete = results.filter((r): r is { key: string; outcome: Extract<Outcome, { kind: 'complete' }>; plannedCut: boolean } => r.outcome.kind === 'complete');
    const cut = results.filter((r) => r.outcome.kind === 'cut');
    for (const r of complete) expect(r.outcome.seen, r.key).toEqual(solo.get(r.key));
    // Cut-off requests are only the ones we cut (a timeout may come after a short reply finished).
    expect(cut.every((r) => r.plannedCut)).toBe(true);
    expect(complete.length).toBeGreaterThanOrEqual(CLIENTS);
    expect(cut.length).toBeGreaterThan(0);

    // Everything cut was cancelled and freed: nothing in use, nothing queued.
    const deadline = Date.now() + 15_000;
    while ((await metricValue('weft_requests_running')) + (await metricValue('weft_requests_waiting')) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await metricValue('weft_kv_cache_used_blocks')).toBe(0);
    expect(await metricValue('weft_requests_running')).toBe(0);
    expect(await metricValue('weft_requests_waiting')).toBe(0);
    expect(await metricValue('weft_preemptions_total')).toBeGreaterThan(0);
    expect(await metricValue('weft_request_finished_total{model="weft-demo",finish_reason="aborted"}')).toBeGreaterThan(0);
    console.log(
      `seed workload: ${results.length} requests in ${STORM_MS / 1000} s (${complete.length} complete and solo-identical, ${cut.length} cut), ` +
        `preemptions ${await metricValue('weft_preemptions_total')}, KV ${totalBlocks} blocks`,
    );

    // Still serving, and a graceful stop.
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
    serve.child.kill('SIGTERM');
    const exit = await serve.exited;
    expect(exit.code).toBe(0);
    expect(serve.stderr()).toContain('stopped');
  }, STORM_MS + 120_000);
});
