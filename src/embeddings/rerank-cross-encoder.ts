/**
 * The head of a cross-encoder reranker (BertForSequenceClassification as
 * bge-reranker-style and ms-marco models ship, and the XLM-RoBERTa layout of
 * bge-reranker-base/large/v2-m3): the encoder's final hidden state at the
 * first token ([CLS] / <s>) through a dense layer and tanh, then a linear
 * layer to the labels, then sentence-transformers' CrossEncoder activation.
 *
 * This is computed here from the CLS state an encoder backend returns
 * (last-token's sibling: 'cls' pooling); the weights are read from the
 * folder's safetensors.
 */
import { ModelLoadError, UnsupportedModelError } from '../errors.js';
import type { TensorIndex } from '../model-files/safetensors.js';
import { readRows, tensorNamed, type Matrix } from './rerank-weights.js';

/** CrossEncoder.predict()'s activation: sigmoid for one label unless the folder names another (config.json). */
export type CrossEncoderActivation = 'sigmoid' | 'identity';

export interface CrossEncoderHead {
  /** [hidden][hidden] and [hidden]: the pooler (BERT) or classifier.dense (RoBERTa). */
  readonly dense: Matrix;
  readonly denseBias: Matrix;
  /** [labels][hidden] and [labels]: the classifier (BERT) or classifier.out_proj (RoBERTa). */
  readonly out: Matrix;
  readonly outBias: Matrix;
  readonly activation: CrossEncoderActivation;
}

/** Tensor names of the two layers, by how the architecture names them. */
const LAYOUTS = [
  { dense: 'bert.pooler.dense', out: 'classifier' },
  { dense: 'classifier.dense', out: 'classifier.out_proj' },
] as const;

/** Reads the head's four tensors from the folder; the layout is the one whose tensors are there. */
export async function loadCrossEncoderHead(folder: string, tensors: TensorIndex, activation: CrossEncoderActivation): Promise<CrossEncoderHead> {
  const layout = LAYOUTS.find((l) => tensors.has(`${l.dense}.weight`) && tensors.has(`${l.out}.weight`));
  if (layout === undefined)
    throw new ModelLoadError(`${folder}: no cross-encoder head found (expected bert.pooler.dense.* with classifier.*, or classifier.dense.* with classifier.out_proj.*)`, folder);
  const [dense, denseBias, out, outBias] = await Promise.all(
    [`${layout.dense}.weight`, `${layout.dense}.bias`, `${layout.out}.weight`, `${layout.out}.bias`].map((name) => readRows(tensorNamed(tensors, name, folder))),
  );
  const head = { dense: dense!, denseBias: denseBias!, out: out!, outBias: outBias!, activation };
  const width = head.dense.cols;
  if (head.dense.rows !== width || head.denseBias.cols !== width || head.out.cols !== width || head.outBias.cols !== head.out.rows)
    throw new ModelLoadError(`${folder}: the cross-encoder head's shapes do not fit together (dense ${head.dense.rows}x${width}, out ${head.out.rows}x${head.out.cols})`, folder);
  if (head.out.rows !== 1) throw new UnsupportedModelError(`${folder}: the classifier has ${head.out.rows} labels; a reranker gives one relevance score (one label)`);
  return head;
}

/** The raw logits: out(tanh(dense(cls))), in float64. */
export function crossEncoderLogits(head: CrossEncoderHead, cls: Float32Array): Float64Array {
  const width = head.dense.cols;
  if (cls.length !== width) throw new RangeError(`the CLS state has ${cls.length} values; the head expects ${width}`);
  const pooled = new Float64Array(width);
  for (let r = 0; r < width; r++) {
    let sum = head.denseBias.data[r]!;
    for (let c = 0; c < width; c++) sum += head.dense.data[r * width + c]! * cls[c]!;
    pooled[r] = Math.tanh(sum);
  }
  const logits = new Float64Array(head.out.rows);
  for (let r = 0; r < head.out.rows; r++) {
    let sum = head.outBias.data[r]!;
    for (let c = 0; c < width; c++) sum += head.out.data[r * width + c]! * pooled[c]!;
    logits[r] = sum;
  }
  return logits;
}

/** The relevance score CrossEncoder.predict() gives: the one logit through the activation. */
export function crossEncoderScore(head: CrossEncoderHead, cls: Float32Array): number {
  const logit = crossEncoderLogits(head, cls)[0]!;
  return head.activation === 'sigmoid' ? 1 / (1 + Math.exp(-logit)) : logit;
}

/**
 * The activation config.json names (sentence-transformers 4+ writes
 * `sentence_transformers.activation_fn`, earlier ones
 * `sbert_ce_default_activation_function`); none: sigmoid, CrossEncoder's
 * default for one label.
 */
export function crossEncoderActivation(config: Record<string, unknown>, file: string): CrossEncoderActivation {
  const st = config.sentence_transformers;
  const named = typeof st === 'object' && st !== null && typeof (st as Record<string, unknown>).activation_fn === 'string'
    ? (st as Record<string, string>).activation_fn
    : typeof config.sbert_ce_default_activation_function === 'string' ? config.sbert_ce_default_activation_function : undefined;
  if (named === undefined) return 'sigmoid';
  const last = named.slice(named.lastIndexOf('.') + 1);
  if (last === 'Sigmoid') return 'sigmoid';
  if (last === 'Identity') return 'identity';
  throw new UnsupportedModelError(`${file}: the cross-encoder's activation ${JSON.stringify(named)} is not supported (Sigmoid or Identity)`);
}
