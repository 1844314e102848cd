/**
 * Quantizing float weights at load (the `quantize` option of CpuBackend and
 * Pipeline): matrices whose rows are whole 32-weight blocks are stored in a
 * GGUF block format instead of F32/F16/BF16 (native/src/cpu/kernels/quant/quant.h).
 */
import { InvalidOptionError } from '../../errors.js';

/** 'q8_0': 8-bit, 34 bytes per 32 weights. 'q4_0': 4-bit, 18 bytes per 32 weights. */
export type WeightQuantization = 'q8_0' | 'q4_0';
export const WEIGHT_QUANTIZATIONS: readonly WeightQuantization[] = ['q8_0', 'q4_0'];

/** The option's value, checked (undefined: keep the weights as stored). */
export function checkQuantization(value: unknown, option = 'quantize'): WeightQuantization | undefined {
  if (value === undefined) return undefined;
  if (!(WEIGHT_QUANTIZATIONS as readonly unknown[]).includes(value))
    throw new InvalidOptionError(option, `expected ${WEIGHT_QUANTIZATIONS.map((q) => JSON.stringify(q)).join(' or ')}, got ${JSON.stringify(value)}`);
  return value as WeightQuantization;
}
