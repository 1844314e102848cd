/**
 * Which tensors a model needs, checked against what its safetensors hold.
 *
 * The result is a load plan: for every weight slot the backend reports (the
 * CPU backend's come from its one slot table, native/src/cpu/model/weights.cc), the
 * tensor of that name and where its bytes are. Any missing tensor, unsupported
 * dtype or wrong shape is a ModelLoadError naming the file and the tensor.
 * (Tied models have no lm_head slot: an lm_head.weight saved alongside is the
 * same matrix and is not read.)
 */
import { ModelLoadError } from '../errors.js';
import type { TensorPart, TensorRows } from './encoder-config.js';
import type { TensorIndex, TensorInfo } from './safetensors.js';

/** The dtypes the loader accepts: 16-bit matrices stay 16-bit in memory, norms and biases become float32. */
export const WEIGHT_DTYPES = ['F32', 'F16', 'BF16'] as const;

export interface PlannedTensor {
  /** Native slot name, e.g. "q_proj" or "q_proj.bias". */
  readonly kind: string;
  /** Layer index, or -1 for model-level tensors. */
  readonly layer: number;
  readonly info: TensorInfo;
}

/**
 * A planned tensor; `prepare` (if set) gives the bytes to load instead, released after loading (GGUF's reordered Q/K rows).
 * Made by the model readers (safetensors, gguf/open.ts), loaded by a backend (backends/cpu/cpu-backend.ts).
 */
export interface LoadableTensor extends PlannedTensor {
  readonly prepare?: () => Promise<{ readonly info: PlannedTensor['info']; release(): Promise<void> }>;
}

/** A weight the backend needs: its slot and shape (the CPU backend's come from its native slot table). */
export interface WeightSlot {
  readonly kind: string;
  readonly layer: number;
  readonly shape: readonly number[];
}

/**
 * The Hugging Face tensor name of a slot: "q_proj" in layer 3 is
 * model.layers.3.self_attn.q_proj.weight; "linear_attn.A_log" in layer 0 is
 * model.layers.0.linear_attn.A_log (a parameter, no ".weight");
 * "mlp.experts.5.up_proj" is model.layers.N.mlp.experts.5.up_proj.weight. `prefix`:
 * ModelConfig.weightPrefix.
 */
export function huggingFaceTensorName(kind: string, layer: number, prefix = 'model.'): string {
  if (layer < 0) return kind === 'lm_head' ? 'lm_head.weight' : `${prefix}${kind}.weight`;
  const base = `${prefix}layers.${layer}.`;
  if (kind.startsWith('linear_attn.')) {
    const name = kind.slice('linear_attn.'.length);
    return name === 'A_log' || name === 'dt_bias' ? `${base}${kind}` : `${base}${kind}.weight`;
  }
  // A mixture-of-experts layer's: "mlp.gate", "mlp.experts.3.up_proj", "mlp.shared_expert_gate".
  if (kind.startsWith('mlp.')) return `${base}${kind}.weight`;
  const [module, param = 'weight'] = kind.split('.');
  const group = /^[qkvo]_(proj|norm)$/.test(module ?? '') ? 'self_attn.' : /^(gate|up|down)_proj$/.test(module ?? '') ? 'mlp.' : '';
  return `${base}${group}${module}.${param}`;
}

/**
 * The file's shape as the slot takes it: a depthwise conv1d weight is stored
 * [channels, 1, taps] and held flattened, [channels x taps] (row-major, so the
 * bytes are the same).
 */
function asSlotShape(kind: string, shape: readonly number[]): readonly number[] {
  if (kind === 'linear_attn.conv1d' && shape.length === 3 && shape[1] === 1) return [shape[0]! * shape[2]!];
  return shape;
}

/**
 * How a slot's tensor is named in the folder's safetensors: huggingFaceTensorName (decoders),
 * encoderTensorNaming (encoders); a TensorPart is a block of a fused tensor's rows, TensorRows a table's rows from an offset.
 */
export type TensorNaming = (kind: string, layer: number, prefix?: string) => string | TensorPart | TensorRows;

/** Block `part` of `parts` equal row blocks of a matrix (q, k or v of a fused Wqkv): its own offset, bytes and shape. */
function rowBlock(whole: TensorInfo, { part, parts }: TensorPart, where: string): TensorInfo {
  const [rows, cols] = whole.shape;
  if (whole.shape.length !== 2 || rows === undefined || cols === undefined || rows % parts !== 0)
    throw new ModelLoadError(`${where}: shape ${JSON.stringify(whole.shape)} is not ${parts} equal blocks of rows`, whole.file, whole.name);
  const byteLength = whole.byteLength / parts;
  return { ...whole, shape: [rows / parts, cols], offset: whole.offset + part * byteLength, byteLength };
}

/** Rows `firstRow` .. `firstRow + rows` of a matrix (a position table whose first rows are never read). */
function rowsFrom(whole: TensorInfo, firstRow: number, rows: number, where: string): TensorInfo {
  const [stored, cols] = whole.shape;
  if (whole.shape.length !== 2 || stored === undefined || cols === undefined || stored < firstRow + rows)
    throw new ModelLoadError(`${where}: shape ${JSON.stringify(whole.shape)} has no ${rows} rows after row ${firstRow}`, whole.file, whole.name);
  const rowBytes = whole.byteLength / stored;
  return { ...whole, shape: [rows, cols], offset: whole.offset + firstRow * rowBytes, byteLength: rows * rowBytes };
}

export function planWeights(
  slots: readonly WeightSlot[],
  tensors: TensorIndex,
  folder: string,
  prefix?: string,
  naming: TensorNaming = huggingFaceTensorName,
): PlannedTensor[] {
  return slots.map(({ kind, layer, shape }) => {
    const named = naming(kind, layer, prefix);
    const name = typeof named === 'string' ? named : named.name;
    const whole = tensors.get(name);
    if (!whole) throw new ModelLoadError(`${folder}: tensor ${name} is missing`, folder, name);
    const where = `${whole.file} (tensor ${name})`;
    if (!(WEIGHT_DTYPES as readonly string[]).includes(whole.dtype))
      throw new ModelLoadError(`${where}: dtype ${whole.dtype} is not supported (${WEIGHT_DTYPES.join(', ')})`, whole.file, name);
    const stored = typeof named === 'string' ? whole : 'firstRow' in named ? rowsFrom(whole, named.firstRow, shape[0]!, where) : rowBlock(whole, named, where);
    const info = { ...stored, shape: [...asSlotShape(kind, stored.shape)] };
    if (info.shape.length !== shape.length || info.shape.some((d, i) => d !== shape[i]))
      throw new ModelLoadError(`${where}: shape ${JSON.stringify(stored.shape)}, expected ${JSON.stringify(shape)}`, stored.file, name);
    return { kind, layer, info };
  });
}
