import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer } from '../../src/engine/detokenizer.js';
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
