/**
 * Which kind of reranker a model folder is, and its head, read on the first
 * rerank() call (a chat model never pays for it):
 *
 * - `*ForSequenceClassification` in config.json's architectures: a
 *   cross-encoder (rerank-cross-encoder.ts) with its tokenizer's pair template;
 * - a causal LM (`*ForCausalLM`) whose folder name says "reranker" (as
 *   Qwen3-Reranker-0.6B does), or any causal LM opened with the pipeline
 *   option `rerank` (a renamed copy, a fine-tune): a yes/no reranker
 *   (rerank-yes-no.ts), its "yes" and "no" tokens looked up in the tokenizer;
 * - anything else: UnsupportedModelError saying how to mark it.
 */
import { basename, join, resolve } from 'node:path';
import { InvalidOptionError, ModelLoadError, UnsupportedModelError } from '../errors.js';
import { MAX_FILE_BYTES, parseJsonText, readModelFile } from '../model-files/model-file.js';
import { openSafetensorsFolder } from '../model-files/safetensors.js';
import { crossEncoderActivation, loadCrossEncoderHead, type CrossEncoderHead } from './rerank-cross-encoder.js';
import { pairTemplateOf, type PairTemplate } from './rerank-pair.js';
import { readRows, tensorNamed } from './rerank-weights.js';
import { DEFAULT_RERANK_INSTRUCTION, type YesNoReranker } from './rerank-yes-no.js';

export interface CrossEncoderReranker {
  readonly kind: 'cross-encoder';
  readonly head: CrossEncoderHead;
  readonly pairTemplate: PairTemplate;
}

export type Reranker = YesNoReranker | CrossEncoderReranker;

/** Pipeline.create's `rerank` option: marks a causal LM as a yes/no reranker, with the default instruction. */
export interface RerankPipelineOptions {
  /** The instruction used when a rerank() call gives none; default the model card's web-search one. */
  readonly instruction?: string;
}

/** Checks the `rerank` option (InvalidOptionError naming the field); undefined passes. */
export function checkRerankPipelineOptions(options: unknown): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidOptionError('rerank', 'expected an object { instruction? }');
  for (const key of Object.keys(options)) if (key !== 'instruction') throw new InvalidOptionError(`rerank.${key}`, 'is not a rerank option (instruction)');
  const { instruction } = options as { instruction?: unknown };
  if (instruction !== undefined && (typeof instruction !== 'string' || instruction === '')) throw new InvalidOptionError('rerank.instruction', 'must be a non-empty string');
}

/** The tokenizer calls detection needs: the "yes" / "no" token ids. */
export interface TokenLookup {
  tokenToId(token: string): number | undefined;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readJson(dir: string, name: string): Promise<unknown> {
  const bytes = await readModelFile(dir, name, name === 'tokenizer.json' ? MAX_FILE_BYTES.tokenizer : MAX_FILE_BYTES.smallJson);
  return bytes === undefined ? undefined : parseJsonText(bytes.toString('utf8'), join(dir, name));
}

/** What the model folder `dir` reranks with; `option` is the pipeline's `rerank` option. */
export async function readReranker(dir: string, option: RerankPipelineOptions | undefined, tokens: TokenLookup): Promise<Reranker> {
  const configFile = join(dir, 'config.json');
  const config = await readJson(dir, 'config.json');
  if (!isObject(config)) throw new ModelLoadError(`${configFile}: missing or not a JSON object`, configFile);
  const architecture = Array.isArray(config.architectures) ? String(config.architectures[0]) : '';
  if (architecture.endsWith('ForSequenceClassification')) {
    const tokenizer = await readJson(dir, 'tokenizer.json');
    const head = await loadCrossEncoderHead(dir, await openSafetensorsFolder(dir), crossEncoderActivation(config, configFile));
    return { kind: 'cross-encoder', head, pairTemplate: pairTemplateOf(tokenizer, join(dir, 'tokenizer.json')) };
  }
  const named = /rerank/i.test(basename(resolve(dir)));
  if (architecture.endsWith('ForCausalLM') && (named || option !== undefined)) return readYesNo(dir, config, option, tokens);
  throw new UnsupportedModelError(
    `${dir} is not a reranker: its architecture is ${architecture || 'not named'}. weft reranks with a cross-encoder (config.json architectures *ForSequenceClassification, e.g. bge-reranker) ` +
      'or a yes/no reranker such as Qwen3-Reranker (a *ForCausalLM folder whose name contains "reranker", or any causal LM opened with Pipeline.create({ model, rerank: {} }))',
  );
}

async function readYesNo(dir: string, config: Json, option: RerankPipelineOptions | undefined, tokens: TokenLookup): Promise<YesNoReranker> {
  const yesTokenId = tokens.tokenToId('yes');
  const noTokenId = tokens.tokenToId('no');
  if (yesTokenId === undefined || noTokenId === undefined)
    throw new UnsupportedModelError(`${join(dir, 'tokenizer.json')}: a yes/no reranker needs "yes" and "no" as single tokens, and this tokenizer has ${yesTokenId === undefined ? 'no "yes"' : 'no "no"'}`);
  const tensors = await openSafetensorsFolder(dir);
  // Qwen3-Reranker-0.6B ties its LM head to the input embedding; the larger ones have their own.
  const name = tensors.has('lm_head.weight') ? 'lm_head.weight' : config.tie_word_embeddings === true ? 'model.embed_tokens.weight' : 'lm_head.weight';
  const rows = await readRows(tensorNamed(tensors, name, dir), [yesTokenId, noTokenId]);
  return { kind: 'yes-no', rows, yesTokenId, noTokenId, instruction: option?.instruction ?? DEFAULT_RERANK_INSTRUCTION };
}
