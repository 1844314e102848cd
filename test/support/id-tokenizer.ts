import type { Tokenizer } from '../../src/text/types.js';

/**
 * For model fixtures without a tokenizer (test/fixtures/qwen35-tiny*): prompts
 * go in as token ids, and an id's text is "<id>".
 */
export class IdTokenizer implements Tokenizer {
  readonly bosTokenId = undefined;
  constructor(
    readonly vocabSize: number,
    readonly eosTokenIds: readonly number[] = [],
  ) {}
  encode(text: string): number[] {
    return [...text.matchAll(/<(\d+)>/g)].map((m) => Number(m[1]));
  }
  decode(ids: readonly number[]): string {
    return ids.map((id) => `<${id}>`).join('');
  }
  tokenToId(token: string): number | undefined {
    return /^<\d+>$/.test(token) ? Number(token.slice(1, -1)) : undefined;
  }
  idToToken(id: number): string {
    return `<${id}>`;
  }
}
