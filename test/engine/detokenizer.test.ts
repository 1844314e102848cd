import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer } from '../../src/engine/detokenizer.js';
import { StopStringMatcher } from '../../src/engine/stop-strings.js';
import { HfTokenizer } from '../../src/index.js';
import { loadText } from '../../src/text/load-text.js';
import { sharedModel } from '../native/helpers.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';

describe('IncrementalDetokenizer', () => {
  it('joined deltas equal decoding all output ids, for any UTF-8 text split into bytes', () => {
    const tokenizer = new ByteTokenizer();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme', maxLength: 6 }), (text, prompt) => {
        const promptIds = tokenizer.encode(prompt);
        const ids = tokenizer.encode(text, { addSpecialTokens: false });
        const detokenizer = new IncrementalDetokenizer(tokenizer, promptIds);
        const deltas = ids.map((id) => detokenizer.push(id));
        // Held back only while incomplete: a U+FFFD the text itself contains comes out with the next token or at the end.
        if (!text.includes('\uFFFD')) for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
        expect(deltas.join('') + detokenizer.flush()).toBe(tokenizer.decode(ids));
      }),
      { numRuns: 500 },
    );
  });

  const dir = sharedModel('stories260K');
  it.skipIf(dir === undefined)('keeps sentencepiece leading spaces: deltas add up to the text decode(prompt + output) adds', async () => {
    const { tokenizer } = await loadText(dir!);
    expect(tokenizer).toBeInstanceOf(HfTokenizer);
    const prompt = tokenizer.encode('Once upon a time');
    const output = tokenizer.encode(' there was a little girl. She said "hi!" and ran away.', { addSpecialTokens: false });
    const detokenizer = new IncrementalDetokenizer(tokenizer, prompt);
    const joined = output.map((id) => detokenizer.push(id)).join('');
    const full = tokenizer.decode([...prompt, ...output]);
    expect(joined).toBe(full.slice(tokenizer.decode(prompt).length));
  });
});

describe('IncrementalDetokenizer.flush', () => {
  it('releases an unfinished character at the end instead of losing it', () => {
    const tokenizer = new ByteTokenizer();
    const detokenizer = new IncrementalDetokenizer(tokenizer, []);
    const euro = [...new TextEncoder().encode('a€')]; // 'a' then 3 bytes
    expect(detokenizer.push(euro[0]!)).toBe('a');
    expect(detokenizer.push(euro[1]!)).toBe('');
    expect(detokenizer.flush()).toBe('\uFFFD');
    expect(detokenizer.flush()).toBe('');
  });
});

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
