import type { Tokenizer } from '../../src/text/types.js';

/**
 * Bytes are ids 0..255; BOS 256, EOS 257, and 258 a special "[TOOL_CALLS]"
 * marker (as Mistral's). Decoding incomplete UTF-8 yields U+FFFD, like real tokenizers.
 */
export const BOS = 256;
export const EOS = 257;
export const TOOL_CALLS = 258;
const SPECIAL_TEXT: Record<number, string> = { [BOS]: '<s>', [EOS]: '</s>', [TOOL_CALLS]: '[TOOL_CALLS]' };

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

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (options.skipSpecialTokens !== false) return this.decoder.decode(Uint8Array.from(ids.filter((id) => id < 256)));
    let text = '';
    let bytes: number[] = [];
    for (const id of ids) {
      if (id < 256) {
        bytes.push(id);
        continue;
      }
      text += this.decoder.decode(Uint8Array.from(bytes)) + (SPECIAL_TEXT[id] ?? '');
      bytes = [];
    }
    return text + this.decoder.decode(Uint8Array.from(bytes));
  }

  tokenToId(token: string): number | undefined {
    const bytes = this.encoder.encode(token);
    return bytes.length === 1 ? bytes[0] : undefined;
  }

  idToToken(id: number): string | undefined {
    return id < 256 ? String.fromCharCode(id) : SPECIAL_TEXT[id];
  }
}
