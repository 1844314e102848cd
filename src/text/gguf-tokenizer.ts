/**
 * The tokenizer and chat template embedded in a GGUF file (`tokenizer.ggml.*`,
 * `tokenizer.chat_template`), rebuilt as a Hugging Face tokenizer.json object
 * in memory so weft's one Tokenizer implementation (HfTokenizer) serves GGUF
 * models too.
 *
 * - "llama" (SentencePiece BPE): pieces with scores. SentencePiece merges the
 *   adjacent pair whose joined piece scores highest; a BPE whose merges are
 *   ranked by the joined piece's score picks the same pair, so the merges are
 *   derived from the scores (as transformers' LlamaConverter does). "▁" stands
 *   for a space, a prefix space is added when add_space_prefix is set (the
 *   default), unknown characters fall back to the <0xNN> byte pieces.
 * - "gpt2" (byte-level BPE): tokens and merges as stored; the pre-tokenizer
 *   regex follows `tokenizer.ggml.pre` (llama.cpp's names).
 * - "bert" (WordPiece): llama.cpp's converter stores the vocabulary with a
 *   "phantom space": a word-initial piece gets "▁" in front, a continuation
 *   loses its "##", control tokens stay. Undone here, with BERT's normaliser
 *   (lowercase and accents stripped, as llama.cpp's WordPiece tokenizer does),
 *   pre-tokeniser and [CLS] A [SEP] (pair: [CLS] A [SEP] B [SEP], types 0 / 1).
 * Control and unknown tokens become special added tokens, user-defined ones
 * plain added tokens (matched before the model runs, as llama.cpp does).
 */
import { TokenizerError, UnsupportedModelError } from '../errors.js';
import { ChatTemplate } from './chat-template.js';
import { HfTokenizer } from './hf-tokenizer.js';
import type { TextAssets } from './load-text.js';
import type { TextSource } from './sandbox/protocol.js';
import { GgufMetadata } from '../model-files/gguf/metadata.js';
import type { GgufFile } from '../model-files/gguf/reader.js';

/** llama.cpp's `enum llama_token_type`. */
export const TokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** Pre-tokenizer regexes by `tokenizer.ggml.pre` (the patterns these model families publish). */
const PRE_TOKENIZER_REGEX: Record<string, string> = {
  default: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  'llama-bpe':
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

interface Vocabulary {
  readonly tokens: string[];
  readonly types: number[];
  readonly bos: number | undefined;
  readonly eos: number | undefined;
  readonly extraEos: number[];
  readonly unk: number | undefined;
}

/** The GGUF's tokenizer, chat template and end-of-generation ids. */
export function ggufTextAssets(gguf: GgufFile): TextAssets {
  const meta = new GgufMetadata(gguf);
  const model = meta.string('tokenizer.ggml.model');
  if (model === undefined) throw new TokenizerError(`${gguf.file}: no tokenizer (tokenizer.ggml.model is missing)`);
  const vocab = readVocabulary(meta);
  let tokenizerJson: Record<string, unknown>;
  let addBos: boolean;
  if (model === 'llama') {
    tokenizerJson = sentencePieceJson(meta, vocab);
    addBos = meta.bool('tokenizer.ggml.add_bos_token') ?? true;
  } else if (model === 'gpt2') {
    tokenizerJson = byteLevelJson(meta, vocab);
    addBos = meta.bool('tokenizer.ggml.add_bos_token') ?? false;
  } else if (model === 'bert') {
    tokenizerJson = wordPieceJson(meta, vocab);
    addBos = false;
  } else {
    throw new UnsupportedModelError(`${gguf.file}: tokenizer model "${model}" is not supported (llama, gpt2, bert)`);
  }
  const name = (id: number | undefined) => (id === undefined ? undefined : vocab.tokens[id]);
  const tokenizerConfig: Record<string, unknown> = {
    // A WordPiece tokenizer's post-processor adds [CLS] and [SEP]; the others' flags decide.
    ...(model !== 'bert' && {
      add_bos_token: addBos && vocab.bos !== undefined,
      add_eos_token: (meta.bool('tokenizer.ggml.add_eos_token') ?? false) && vocab.eos !== undefined,
    }),
    ...(vocab.bos !== undefined && { bos_token: name(vocab.bos) }),
    ...(vocab.eos !== undefined && { eos_token: name(vocab.eos) }),
    ...(vocab.unk !== undefined && { unk_token: name(vocab.unk) }),
  };
  const tokenizer = new HfTokenizer({ tokenizerJson, tokenizerConfig, extraEosTokenIds: vocab.extraEos, file: `${gguf.file} (tokenizer.ggml.*)` });

  const template = meta.string('tokenizer.chat_template');
  const specialTokens = { bosToken: name(vocab.bos), eosToken: name(vocab.eos) };
  const templates = template === undefined ? undefined : new Map([['default', template]]);
  const chatTemplate = templates === undefined ? undefined : new ChatTemplate(templates, specialTokens);
  // What the text sandbox rebuilds the same tokenizer and template from (src/text/sandbox).
  const source: TextSource = {
    tokenizerText: JSON.stringify(tokenizerJson),
    tokenizerConfig,
    extraEosTokenIds: vocab.extraEos,
    file: `${gguf.file} (tokenizer.ggml.*)`,
    templates: templates === undefined ? undefined : [...templates],
    specialTokens,
  };
  return { tokenizer, chatTemplate, generationDefaults: vocab.extraEos.length > 0 ? { eosTokenIds: vocab.extraEos } : {}, source };
}

function readVocabulary(meta: GgufMetadata): Vocabulary {
  const tokens = meta.strings('tokenizer.ggml.tokens');
  if (tokens === undefined || tokens.length === 0) return meta.fail('tokenizer.ggml.tokens is missing or empty');
  const types = meta.numbers('tokenizer.ggml.token_type') ?? tokens.map(() => TokenType.NORMAL);
  if (types.length !== tokens.length) meta.fail(`tokenizer.ggml.token_type has ${types.length} entries for ${tokens.length} tokens`);
  const id = (key: string) => meta.tokenId(`tokenizer.ggml.${key}`, tokens.length);
  const eos = id('eos_token_id');
  // llama.cpp also ends generation at the end-of-turn / end-of-message tokens.
  const extraEos = [id('eot_token_id'), id('eom_token_id')].filter((t): t is number => t !== undefined && t !== eos);
  return { tokens, types, bos: id('bos_token_id'), eos, extraEos, unk: id('unknown_token_id'), };
}

function addedTokens(vocab: Vocabulary, alsoUnknown: boolean): unknown[] {
  const added: unknown[] = [];
  vocab.tokens.forEach((content, id) => {
    const type = vocab.types[id];
    const special = type === TokenType.CONTROL || (alsoUnknown && type === TokenType.UNKNOWN);
    if (!special && type !== TokenType.USER_DEFINED) return;
    added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special });
  });
  return added;
}

function vocabObject(tokens: readonly string[], file: string): Record<string, number> {
  const vocab: Record<string, number> = Object.create(null);
  tokens.forEach((token, id) => {
    // A repeated piece keeps its first id (llama.cpp maps text to the first as well).
    if (!(token in vocab)) vocab[token] = id;
  });
  if (Object.keys(vocab).length === 0) throw new TokenizerError(`${file}: empty vocabulary`);
  return vocab;
}

function sentencePieceJson(meta: GgufMetadata, vocab: Vocabulary): Record<string, unknown> {
  const scores = meta.numbers('tokenizer.ggml.scores');
  if (scores === undefined || scores.length !== vocab.tokens.length)
    return meta.fail(`tokenizer.ggml.scores must have one score per token (${vocab.tokens.length})`);
  const addPrefix = meta.bool('tokenizer.ggml.add_space_prefix') ?? true;
  const ids = vocabObject(vocab.tokens, meta.gguf.file);

  // Every normal piece that splits into two pieces gives a merge, ranked by the piece's score.
  const merges: Array<{ left: string; right: string; score: number; id: number; leftId: number; rightId: number }> = [];
  vocab.tokens.forEach((piece, id) => {
    if (vocab.types[id] !== TokenType.NORMAL && vocab.types[id] !== TokenType.USER_DEFINED) return;
    const chars = [...piece];
    for (let k = 1; k < chars.length; k++) {
      const left = chars.slice(0, k).join('');
      const right = chars.slice(k).join('');
      const leftId = ids[left];
      const rightId = ids[right];
      if (leftId !== undefined && rightId !== undefined) merges.push({ left, right, score: scores[id]!, id, leftId, rightId });
    }
  });
  merges.sort((a, b) => b.score - a.score || a.id - b.id || a.leftId - b.leftId || a.rightId - b.rightId);

  const unk = vocab.unk === undefined ? null : vocab.tokens[vocab.unk];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens(vocab, true),
    normalizer: {
      type: 'Sequence',
      normalizers: [
        ...(addPrefix ? [{ type: 'Prepend', prepend: '\u2581' }] : []),
        { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        ...(addPrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : []),
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: unk,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab: ids,
      merges: merges.map((m) => [m.left, m.right]),
    },
  };
}

function byteLevelJson(meta: GgufMetadata, vocab: Vocabulary): Record<string, unknown> {
  const merges = meta.strings('tokenizer.ggml.merges');
  if (merges === undefined) return meta.fail('a gpt2 tokenizer needs tokenizer.ggml.merges');
  const pre = meta.string('tokenizer.ggml.pre') ?? 'default';
  const regex = PRE_TOKENIZER_REGEX[pre];
  if (regex === undefined)
    throw new UnsupportedModelError(`${meta.gguf.file}: pre-tokenizer "${pre}" is not supported (${Object.keys(PRE_TOKENIZER_REGEX).join(', ')})`);
  const pairs = merges.map((merge, i) => {
    const space = merge.indexOf(' ');
    if (space <= 0 || space === merge.length - 1) meta.fail(`tokenizer.ggml.merges[${i}] is not "left right": ${JSON.stringify(merge)}`);
    return [merge.slice(0, space), merge.slice(space + 1)];
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens(vocab, false),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: vocabObject(vocab.tokens, meta.gguf.file),
      merges: pairs,
    },
  };
}

function wordPieceJson(meta: GgufMetadata, vocab: Vocabulary): Record<string, unknown> {
  const tokens = vocab.tokens.map((token, id) =>
    vocab.types[id] === TokenType.CONTROL || vocab.types[id] === TokenType.UNKNOWN ? token : token.startsWith('\u2581') ? token.slice(1) : `##${token}`,
  );
  const named = (key: string, fallback: string): [string, number] => {
    const id = meta.tokenId(key, tokens.length) ?? tokens.indexOf(fallback);
    if (id < 0) return meta.fail(`a bert tokenizer needs ${key} or a ${fallback} token`);
    return [tokens[id]!, id];
  };
  const [cls, clsId] = named('tokenizer.ggml.bos_token_id', '[CLS]');
  const [sep, sepId] = named('tokenizer.ggml.seperator_token_id', '[SEP]');
  const unk = vocab.unk !== undefined ? tokens[vocab.unk]! : '[UNK]';
  const special = (token: string, typeId: number) => ({ SpecialToken: { id: token, type_id: typeId } });
  const sequence = (id: 'A' | 'B', typeId: number) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens({ ...vocab, tokens }, true),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special(cls, 0), sequence('A', 0), special(sep, 0)],
      pair: [special(cls, 0), sequence('A', 0), special(sep, 0), sequence('B', 1), special(sep, 1)],
      special_tokens: { [cls]: { id: cls, ids: [clsId], tokens: [cls] }, [sep]: { id: sep, ids: [sepId], tokens: [sep] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: unk, continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: vocabObject(tokens, meta.gguf.file) },
  };
}
