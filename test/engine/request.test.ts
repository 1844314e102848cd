/** The request state machine drawn at the top of src/engine/request.ts. */
import { describe, expect, it } from 'vitest';
import { Request, type RequestSpec } from '../../src/engine/request.js';
import { EngineError } from '../../src/errors.js';
import { GREEDY } from '../../src/sampling/params.js';

const spec: RequestSpec = {
  promptTokenIds: [1, 2, 3],
  sampling: GREEDY,
  stop: { maxTokens: 4, stopTokenIds: [], stopStrings: [], ignoreEos: false },
  priority: 0,
};

describe('Request', () => {
  it('moves waiting -> running -> preempted -> running -> finished, and preemption forgets what was computed', () => {
    const request = new Request(7, 7, spec);
    expect(request.status).toBe('waiting');
    expect(request.tokens).toEqual([1, 2, 3]);
    expect(request.tokens).not.toBe(spec.promptTokenIds); // its own copy
    request.transition('running');
    request.numComputed = 3;
    request.numCachedPrefix = 2;
    request.tokens.push(9);
    expect(request.numPending).toBe(1);
    request.preempt();
    expect(request).toMatchObject({ status: 'preempted', numComputed: 0, numCachedPrefix: 0 });
    expect(request.tokens).toEqual([1, 2, 3, 9]); // recomputed on re-admission, generated tokens kept
    expect(request.numPending).toBe(4);
    request.transition('running');
    expect(request.finish('stop')).toBe(true);
    expect(request).toMatchObject({ status: 'finished', finishReason: 'stop' });
  });

  it('finishes from any state, once: later finishes (aborts) change nothing', () => {
    for (const path of [[], ['running'], ['running', 'preempted']] as const) {
      const request = new Request(1, 1, spec);
      for (const to of path) request.transition(to);
      const error = new Error('gone');
      expect(request.finish('aborted', error)).toBe(true);
      expect(request.finish('error', new Error('later'))).toBe(false);
      expect(request).toMatchObject({ status: 'finished', finishReason: 'aborted', error });
    }
  });

  it('a move the diagram does not draw throws EngineError and leaves the state as it was', () => {
    const waiting = new Request(2, 2, spec);
    expect(() => waiting.transition('preempted')).toThrow(EngineError);
    expect(() => waiting.preempt()).toThrow(/request 2: illegal transition waiting -> preempted/);
    expect(waiting.status).toBe('waiting');
    const finished = new Request(3, 3, spec);
    finished.finish('length');
    for (const to of ['waiting', 'running', 'preempted'] as const) expect(() => finished.transition(to)).toThrow(EngineError);
    expect(finished.status).toBe('finished');
  });
});
