import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StopStringMatcher } from '../../src/engine/stop-strings.js';

describe('StopStringMatcher', () => {
  it('emits exactly the text before the first stop, however the text is split', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
        const stops = ['END', 'xy'];
        const matcher = new StopStringMatcher(stops);
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        let emitted = '';
        let stopped = false;
        let last = 0;
        for (const point of [...points, text.length]) {
          if (stopped) break;
          const result = matcher.push(text.slice(last, point));
          emitted += result.text;
          stopped = result.stopped;
          last = point;
        }
        if (!stopped) emitted += matcher.flush();
        const first = Math.min(...stops.map((s) => text.indexOf(s)).filter((i) => i >= 0));
        expect(emitted).toBe(Number.isFinite(first) ? text.slice(0, first) : text);
        expect(stopped).toBe(Number.isFinite(first));
      }),
      { numRuns: 1000 },
    );
  });
});
