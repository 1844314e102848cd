import { Tokenizer as HfTokenizerCore } from '@huggingface/tokenizers';
import { InvalidOptionError, TokenizerError } from '../errors.js';
import { specialTokenContent } from './special-tokens.js';
import type { Tokenizer } from './types.js';

export interface HfTokenizerSource {
  /** Parsed tokenizer.json. */
  tokenizerJson: unknown;
  /** Parsed tokenizer_config.json ({} when the model has none). */
  tokenizerConfig: Record<string, unknown>;
  /** More ids that end generation, e.g. generation_config.json's eos_token_id. */
  extraEosTokenIds?: readonly number[];
  /** Where tokenizer.json came from, for error messages. */
  file?: string;
}

/**
 * A Tokenizer over @huggingface/tokenizers.
 *
 * Special tokens: when tokenizer_config.json sets add_bos_token or add_eos_token,
 * those flags decide (as transformers' Llama-family tokenizers do: BOS + text + EOS);
 * otherwise tokenizer.json's post-processor decides (e.g. Llama 3's template).
 */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number | undefined;
  readonly eosTokenIds: readonly number[];
  /** Characters of the longest token (added tokens included): a text of n characters has at least n / this many tokens, up to normalisation. */
  readonly longestTokenLength: number;
  private readonly core: HfTokenizerCore;
  private readonly addBos: boolean | undefined;
  private readonly addEos: boolean | undefined;
  private readonly eosTokenId: number | undefined;

  constructor(source: HfTokenizerSource) {
    if (source === null || typeof source !== 'object' || !('tokenizerJson' in source)) {
      const got = typeof source === 'string' ? `the string ${JSON.stringify(source)}` : source === null ? 'null' : typeof source === 'object' ? 'an object without tokenizerJson' : typeof source;
      throw new InvalidOptionError(
        'source',
        `expected { tokenizerJson, tokenizerConfig } (parsed tokenizer.json and tokenizer_config.json), got ${got}; for a model folder's tokenizer use (await loadText(folder)).tokenizer`,
      );
    }
    if (source.tokenizerConfig === null || typeof source.tokenizerConfig !== 'object') {
      throw new InvalidOptionError('source.tokenizerConfig', 'expected the parsed tokenizer_config.json ({} when the model has none)');
    }
    const where = source.file ?? 'tokenizer.json';
    const config = source.tokenizerConfig;
    if (source.tokenizerJson === null || typeof source.tokenizerJson !== 'object') {
      throw new TokenizerError(`${where}: expected a JSON object`);
    }
    const modelType = (source.tokenizerJson as { model?: { type?: unknown } }).model?.type;
    if (typeof modelType === 'string' && !KNOWN_MODEL_TYPES.has(modelType)) {
      // The library would guess a model from the vocabulary; a type it does not know is a broken file to us.
      throw new TokenizerError(`${where}: unsupported tokenizer model type ${JSON.stringify(modelType)}`);
    }
    try {
      this.core = new HfTokenizerCore(source.tokenizerJson, libraryConfig(config));
      this.core.encode('probe', { add_special_tokens: false });
    } catch (error) {
      throw new TokenizerError(`${where} could not be loaded: ${(error as Error).message}`, { cause: error });
    }

    this.addBos = typeof config.add_bos_token === 'boolean' ? config.add_bos_token : undefined;
    this.addEos = typeof config.add_eos_token === 'boolean' ? config.add_eos_token : undefined;
    this.bosTokenId = this.specialId(config.bos_token, 'bos_token', this.addBos === true, where);
    this.eosTokenId = this.specialId(config.eos_token, 'eos_token', this.addEos === true, where);

    const eos = new Set<number>();
    if (this.eosTokenId !== undefined) eos.add(this.eosTokenId);
    for (const id of source.extraEosTokenIds ?? []) eos.add(id);
    this.eosTokenIds = [...eos];

    let maxId = -1;
    let longest = 1;
    for (const [token, id] of this.core.get_vocab(true)) {
      // Ids with no token (an added token's id past the vocabulary leaves a gap before it) come back keyed undefined.
      if (token === undefined) continue;
      if (id > maxId) maxId = id;
      if (token.length > longest) longest = token.length;
    }
    this.longestTokenLength = longest;
    this.vocabSize = maxId + 1;
    if (this.vocabSize === 0) throw new TokenizerError(`${where}: the vocabulary is empty`);
  }

  encode(text: string, options?: { addSpecialTokens?: boolean }): number[] {
    if (typeof text !== 'string') throw new TokenizerError('encode: text must be a string');
    const addSpecial = options?.addSpecialTokens ?? true;
    if (!addSpecial) return this.core.encode(text, { add_special_tokens: false }).ids;
    if (this.addBos === undefined && this.addEos === undefined) {
      return this.core.encode(text, { add_special_tokens: true }).ids;
    }
    const ids = this.core.encode(text, { add_special_tokens: false }).ids;
    if (this.addBos && this.bosTokenId !== undefined) ids.unshift(this.bosTokenId);
    if (this.addEos && this.eosTokenId !== undefined) ids.push(this.eosTokenId);
    return ids;
  }

  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string {
    // Ids the vocabulary lacks (e.g. padding rows of a larger embedding) decode to nothing,
    // as in the Rust tokenizers; the library would substitute the unknown token instead.
    const known = ids.filter((id) => this.idToToken(id) !== undefined);
    if (known.length === 0) return '';
    return this.core.decode(known, { skip_special_tokens: options?.skipSpecialTokens ?? true });
  }

  tokenToId(token: string): number | undefined {
    return this.core.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) return undefined;
    return this.core.id_to_token(id) ?? undefined;
  }

  private specialId(value: unknown, key: string, required: boolean, where: string): number | undefined {
    const content = specialTokenContent(value);
    if (content === undefined) {
      if (required) throw new TokenizerError(`tokenizer_config.json asks to add ${key} but does not name it`);
      return undefined;
    }
    const id = this.core.token_to_id(content);
    if (id === undefined && required) {
      throw new TokenizerError(`tokenizer_config.json: ${key} ${JSON.stringify(content)} is not in ${where}`);
    }
    return id;
  }
}

const KNOWN_MODEL_TYPES = new Set(['BPE', 'WordPiece', 'Unigram', 'WordLevel']);

/** The config object the library reads: special tokens as plain strings, no tokenization clean-up unless asked. */
function libraryConfig(config: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = { ...config };
  for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const content = specialTokenContent(config[key]);
    if (content === undefined) delete flat[key];
    else flat[key] = content;
  }
  if (Array.isArray(config.additional_special_tokens)) {
    flat.additional_special_tokens = config.additional_special_tokens
      .map(specialTokenContent)
      .filter((t): t is string => t !== undefined);
  }
  // The library would "clean up" spaces before punctuation by default, changing what the model wrote.
  flat.clean_up_tokenization_spaces = config.clean_up_tokenization_spaces === true;
  return flat;
}
