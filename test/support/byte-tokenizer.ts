import type { Tokenizer } from '../../src/text/types.js';

/** Bytes are ids 0..255; BOS 256, EOS 257. Decoding incomplete UTF-8 yields U+FFFD, like real tokenizers. */
export const BOS = 256;
export const EOS = 257;

export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = 260;
  readonly bosTokenId = BOS;
  readonly eosTokenIds = [EOS];
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    const bytes = [...this.encoder.encode(text)];
    return options.addSpecialTokens === false ? bytes : [BOS, ...bytes];
  }

  decode(ids: readonly number[]): string {
    return this.decoder.decode(Uint8Array.from(ids.filter((id) => id < 256)));
  }

  tokenToId(token: string): number | undefined {
    const bytes = this.encoder.encode(token);
    return bytes.length === 1 ? bytes[0] : undefined;
  }

  idToToken(id: number): string | undefined {
    return id < 256 ? String.fromCharCode(id) : id === BOS ? '<s>' : id === EOS ? '</s>' : undefined;
  }
}
