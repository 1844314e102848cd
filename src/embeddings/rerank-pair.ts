/**
 * A cross-encoder's input: the query and the document as one sequence, put
 * together by the tokenizer's pair template (tokenizer.json's post_processor:
 * BERT's [CLS] q [SEP] d [SEP] with token types 0 then 1, RoBERTa's
 * <s> q </s></s> d </s>, or a TemplateProcessing "pair" list), cut to fit by
 * removing tokens from the longer side first ('longest_first', what
 * CrossEncoder asks its tokenizer for).
 *
 * Each side is encoded without special tokens by the tokenizer (the pipeline's
 * encoder); only the assembly is done here.
 */
import { ModelLoadError, PromptTooLongError } from '../errors.js';

/** One piece of a pair template: a special token's ids, or side A / B, each with its token type. */
type Piece = { readonly special: readonly number[]; readonly typeId: number } | { readonly side: 'A' | 'B'; readonly typeId: number };

export interface PairTemplate {
  readonly pieces: readonly Piece[];
}

export interface EncodedPair {
  readonly ids: number[];
  /** Token type (segment) ids, one per id. */
  readonly typeIds: number[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The pair template of a parsed tokenizer.json; `file` names it in errors. */
export function pairTemplateOf(tokenizerJson: unknown, file: string): PairTemplate {
  const fail = (why: string): never => {
    throw new ModelLoadError(`${file}: ${why}; a cross-encoder needs the tokenizer's pair template`, file);
  };
  let processor = isObject(tokenizerJson) ? tokenizerJson.post_processor : undefined;
  // A Sequence of processors (e.g. ByteLevel then a template): the one that adds special tokens.
  if (isObject(processor) && processor.type === 'Sequence' && Array.isArray(processor.processors))
    processor = processor.processors.find((p: unknown) => isObject(p) && ['TemplateProcessing', 'BertProcessing', 'RobertaProcessing'].includes(String(p.type)));
  if (!isObject(processor)) return fail('there is no post_processor');
  const tokenId = (pair: unknown, name: string): number => {
    if (!Array.isArray(pair) || typeof pair[1] !== 'number') return fail(`post_processor.${name} must be [token, id]`);
    return pair[1];
  };
  switch (processor.type) {
    case 'BertProcessing': {
      const cls = [tokenId(processor.cls, 'cls')];
      const sep = [tokenId(processor.sep, 'sep')];
      return { pieces: [{ special: cls, typeId: 0 }, { side: 'A', typeId: 0 }, { special: sep, typeId: 0 }, { side: 'B', typeId: 1 }, { special: sep, typeId: 1 }] };
    }
    case 'RobertaProcessing': {
      const cls = [tokenId(processor.cls, 'cls')];
      const sep = [tokenId(processor.sep, 'sep')];
      return { pieces: [{ special: cls, typeId: 0 }, { side: 'A', typeId: 0 }, { special: sep, typeId: 0 }, { special: sep, typeId: 0 }, { side: 'B', typeId: 0 }, { special: sep, typeId: 0 }] };
    }
    case 'TemplateProcessing': {
      const specials = isObject(processor.special_tokens) ? processor.special_tokens : {};
      if (!Array.isArray(processor.pair)) return fail('post_processor has no "pair" template');
      const pieces = processor.pair.map((item: unknown): Piece => {
        if (isObject(item) && isObject(item.Sequence)) {
          const side = item.Sequence.id;
          if (side !== 'A' && side !== 'B') return fail(`a pair template piece names sequence ${JSON.stringify(side)}`);
          return { side, typeId: Number(item.Sequence.type_id ?? 0) };
        }
        if (isObject(item) && isObject(item.SpecialToken)) {
          const entry = specials[String(item.SpecialToken.id)];
          if (!isObject(entry) || !Array.isArray(entry.ids) || !entry.ids.every((id) => typeof id === 'number'))
            return fail(`the special token ${JSON.stringify(item.SpecialToken.id)} of the pair template has no ids`);
          return { special: entry.ids as number[], typeId: Number(item.SpecialToken.type_id ?? 0) };
        }
        return fail('a pair template piece is neither a Sequence nor a SpecialToken');
      });
      return { pieces };
    }
    default:
      return fail(`post_processor type ${JSON.stringify(processor.type)} has no pair template weft reads`);
  }
}

/** How many special tokens the template adds around the two sides. */
export function specialTokenCount(template: PairTemplate): number {
  return template.pieces.reduce((n, piece) => n + ('special' in piece ? piece.special.length : 0), 0);
}

/**
 * The pair's ids and token types, at most `maxTokens` long. Over that, with
 * `truncate`, tokens are taken off the end of the longer side one at a time
 * (the second side on a tie), as the tokenizers library's longest_first does;
 * without it, a PromptTooLongError naming `what`.
 */
export function encodePair(template: PairTemplate, a: readonly number[], b: readonly number[], maxTokens: number, truncate: boolean, what: string): EncodedPair {
  const specials = specialTokenCount(template);
  let keepA = a.length;
  let keepB = b.length;
  const total = specials + keepA + keepB;
  if (total > maxTokens) {
    if (!truncate) throw new PromptTooLongError(`${what}: the query and document make ${total} tokens; the model's context holds ${maxTokens} (set truncate: true to cut them)`);
    if (specials >= maxTokens) throw new PromptTooLongError(`${what}: the model's context (${maxTokens} tokens) cannot hold even the pair template's ${specials} special tokens`);
    for (let extra = total - maxTokens; extra > 0; extra--) {
      if (keepA > keepB) keepA--;
      else keepB--;
    }
  }
  const ids: number[] = [];
  const typeIds: number[] = [];
  for (const piece of template.pieces) {
    const part = 'special' in piece ? piece.special : piece.side === 'A' ? a.slice(0, keepA) : b.slice(0, keepB);
    for (const id of part) {
      ids.push(id);
      typeIds.push(piece.typeId);
    }
  }
  return { ids, typeIds };
}

/** How a side becomes token ids: the pipeline's encoder, without special tokens (the template adds them). */
export interface SideEncoder {
  encode(text: string, addSpecialTokens: boolean): Promise<number[]>;
}

/**
 * Every (query, document) pair of a call, encoded for a cross-encoder: the
 * query once, each document on its own, put together by the template within
 * `maxTokens` (errors name `documents[i]`).
 */
export async function encodePairs(encoder: SideEncoder, template: PairTemplate, query: string, documents: readonly string[], maxTokens: number, truncate: boolean): Promise<EncodedPair[]> {
  const [queryIds, ...documentIds] = await Promise.all([query, ...documents].map((text) => encoder.encode(text, false)));
  return documentIds.map((ids, i) => encodePair(template, queryIds!, ids, maxTokens, truncate, `documents[${i}]`));
}
