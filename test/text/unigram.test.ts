/**
 * A Unigram tokenizer.json (XLM-RoBERTa's kind: Metaspace "▁" pieces with
 * scores, <s> ... </s>), as transformers 5 saves XLMRobertaTokenizer's:
 * weft's ids equal the Python `tokenizers` package's on
 * test/fixtures/xlmr-embed-tiny's texts (tools/embeddings/xlmr_fixture.py):
 * accents, Chinese, control characters, runs of spaces, unknown characters.
 * One text differs, in the JS library, not in weft: its whitespace split
 * treats U+FEFF as a space, which the Rust one does not (WordPiece has the
 * same difference; docs/embeddings.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/text/load-text.js';
import { REPO_ROOT } from '../native/helpers.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'xlmr-embed-tiny');
const ref = JSON.parse(readFileSync(join(DIR, 'reference.json'), 'utf8')) as { tokenizer_texts: string[]; tokenizer_ids: number[][] };

describe('Unigram tokenizer.json against the Python tokenizers package', () => {
  it('encodes every text as the Python package does, but the one with U+FEFF', async () => {
    const { tokenizer } = await loadText(DIR);
    const compared = ref.tokenizer_texts.filter((text) => !text.includes('\ufeff'));
    expect(compared.length).toBe(ref.tokenizer_texts.length - 1);
    ref.tokenizer_texts.forEach((text, i) => {
      if (!text.includes('\ufeff')) expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(ref.tokenizer_ids[i]);
    });
    const unk = 3;
    expect(ref.tokenizer_ids[ref.tokenizer_texts.findIndex((t) => t.startsWith('emoji'))]).toContain(unk); // the case is covered
  });

  it('decodes its ids back to the normalised text', async () => {
    const { tokenizer } = await loadText(DIR);
    const text = 'The quick brown fox jumps over the lazy dog.';
    expect(tokenizer.decode(tokenizer.encode(text), { skipSpecialTokens: true })).toBe(text);
  });
});
