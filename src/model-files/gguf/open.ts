/**
 * Opens a GGUF model for the CPU backend: header, config, load plan and RoPE
 * frequencies, all checked before any weight is read.
 */
import type { LoadableTensor, WeightSlot } from '../weights.js';
import type { ModelConfig } from '../config.js';
import { ggufArchitecture, ggufModelConfig, ggufRopeIsInterleaved } from './config.js';
import { readGgufFile, type GgufFile } from './reader.js';
import { ggufInverseFrequencies } from './rope-freqs.js';
import { transformHybridTensor } from './hybrid-transform.js';
import { reorderHeadRows } from './row-order.js';
import { planGgufWeights } from './weights.js';

export interface GgufModel {
  readonly gguf: GgufFile;
  readonly architecture: string;
  readonly config: ModelConfig;
  /** The load plan for the slots a backend reports. */
  plan(slots: readonly WeightSlot[]): LoadableTensor[];
  readonly invFreq: Float64Array;
}

export function openGgufModel(file: string): GgufModel {
  const gguf = readGgufFile(file);
  const architecture = ggufArchitecture(gguf);
  const config = ggufModelConfig(gguf);
  const interleaved = ggufRopeIsInterleaved(architecture);
  const plan = (slots: readonly WeightSlot[]) =>
    planGgufWeights(slots, config, gguf, interleaved).map((t): LoadableTensor => {
      const permutation = t.headPermutation;
      const hybrid = t.hybrid;
      if (hybrid) return { ...t, prepare: () => transformHybridTensor(t.info, hybrid) };
      if (!permutation) return t;
      return { ...t, prepare: () => reorderHeadRows(t.info, permutation.heads, permutation.headDim) };
    });
  return { gguf, architecture, config, plan, invFreq: ggufInverseFrequencies(config, gguf) };
}
