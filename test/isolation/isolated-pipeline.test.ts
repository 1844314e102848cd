/**
 * `isolation: 'process'`: the same API served by a child process; a child
 * that dies (SIGKILL mid-batch, a native abort) fails only the requests in
 * flight, with BackendCrashedError, and a new child serves what follows.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendCrashedError, AbortError, Pipeline, type StreamPart } from '../../src/index.js';
import type { IsolatedPipeline } from '../../src/isolation/host.js';

const MODEL = new URL('../../models/weft-demo/', import.meta.url).pathname;
const PROMPTS = ['The weather in Paris', 'Convert 3 miles', 'Send an email to', 'What is the capital'];

let local: Pipeline;
const expected = new Map<string, number[]>();

beforeAll(async () => {
  local = await Pipeline.create({ model: MODEL, threads: 1 });
  for (const prompt of PROMPTS) expected.set(prompt, (await local.generate(prompt, { maxTokens: 12, temperature: 0, ignoreEos: true })).tokenIds);
});
afterAll(async () => local.close());

const isolated = async (): Promise<IsolatedPipeline> =>
  Pipeline.create({ model: MODEL, threads: 1, isolation: 'process' });

describe('an isolated pipeline', () => {
  it('gives the in-process outputs for generate, chat and stream, and reports stats and events', async () => {
    const pipe = await isolated();
    try {
      const steps: number[] = [];
      pipe.on('step', (info) => steps.push(info.step));
      const results = await Promise.all(PROMPTS.map((p) => pipe.generate(p, { maxTokens: 12, temperature: 0, ignoreEos: true })));
      results.forEach((r, i) => expect(r.tokenIds).toEqual(expected.get(PROMPTS[i]!)));
      const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];
      const chatLocal = await local.chat(messages, { maxTokens: 16, temperature: 0 });
      const chatIsolated = await pipe.chat(messages, { maxTokens: 16, temperature: 0 });
      expect(chatIsolated).toEqual(chatLocal);
      const parts: StreamPart[] = [];
      for await (const part of pipe.stream('The weather in Paris', { maxTokens: 12, temperature: 0, ignoreEos: true })) parts.push(part);
      expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'length' });
      expect(steps.length).toBeGreaterThan(0);
      expect(pipe.stats().requests.finished).toBe(6);
      expect(() => pipe.stream('x', { temperature: -1 })).toThrow(/temperature/);
    } finally {
      await pipe.close();
    }
  });

  it('carries an AbortSignal across: the aborted request fails, the others finish', async () => {
    const pipe = await isolated();
    try {
      const controller = new AbortController();
      const aborted = pipe.generate('The weather in Paris', { maxTokens: 400, temperature: 0, ignoreEos: true, signal: controller.signal });
      const other = pipe.generate('Convert 3 miles', { maxTokens: 12, temperature: 0, ignoreEos: true });
      pipe.once('step', () => controller.abort());
      await expect(aborted).rejects.toBeInstanceOf(AbortError);
      expect((await other).tokenIds).toEqual(expected.get('Convert 3 miles'));
    } finally {
      await pipe.close();
    }
  });

  it('SIGKILL of the child mid-batch fails every request in flight with BackendCrashedError, then serves new ones', async () => {
    const pipe = await isolated();
    try {
      const first = pipe.childPid!;
      const inFlight = PROMPTS.map((p) => pipe.generate(p, { maxTokens: 1000, temperature: 0, ignoreEos: true }));
      let steps = 0;
      await new Promise<void>((resolve) => pipe.on('step', () => ++steps === 3 && resolve()));
      process.kill(first, 'SIGKILL');
      const outcomes = await Promise.allSettled(inFlight);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(BackendCrashedError);
        expect((outcome as PromiseRejectedResult).reason.code).toBe('BACKEND_CRASHED');
      }
      const after = await pipe.generate(PROMPTS[0]!, { maxTokens: 12, temperature: 0, ignoreEos: true });
      expect(after.tokenIds).toEqual(expected.get(PROMPTS[0]!));
      expect(pipe.childPid).not.toBe(first);
      expect(pipe.childRestarts).toBe(1);
    } finally {
      await pipe.close();
    }
  });

  it('a native abort (SIGABRT) in the child mid-batch is the same: typed errors, a new child, correct output', async () => {
    process.env.WEFT_ISOLATION_TEST_ABORT_AT_STEP = '3';
    let pipe: IsolatedPipeline;
    try {
      pipe = await isolated();
    } finally {
      delete process.env.WEFT_ISOLATION_TEST_ABORT_AT_STEP; // the replacement child must not inherit it
    }
    try {
      const outcomes = await Promise.allSettled(PROMPTS.map((p) => pipe.generate(p, { maxTokens: 1000, temperature: 0, ignoreEos: true })));
      for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(BackendCrashedError);
      expect(String((outcomes[0] as PromiseRejectedResult).reason.message)).toMatch(/SIGABRT/);
      const after = await pipe.generate(PROMPTS[1]!, { maxTokens: 12, temperature: 0, ignoreEos: true });
      expect(after.tokenIds).toEqual(expected.get(PROMPTS[1]!));
    } finally {
      await pipe.close();
    }
  });

  it('a bad model folder is the same typed load error as in process', async () => {
    await expect(Pipeline.create({ model: '/nonexistent/weft', isolation: 'process' })).rejects.toMatchObject({ code: 'MODEL_LOAD_ERROR' });
  });
});
