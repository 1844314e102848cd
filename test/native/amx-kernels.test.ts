// The AMX-INT8 Q8_0 kernel (native/src/cpu/kernels/quant/amx/quant_amx.h) through the test hooks:
//  - amxStatus() says whether it can run here, and why not: on a CPU without
//    AMX (this project's CI and dev machines) it is not usable and says so;
//  - quantMatmul('amx', ...) refuses cleanly where it cannot run, and takes
//    Q8_0 only;
//  - where it runs (an AMX CPU: Sapphire Rapids or later, Linux granting the
//    tile state), it equals the avx512vnni kernels bit for bit on odd shapes.
// bench/amx (a C++ harness, no node) proves the same on an AMX machine; its
// figures are in docs/performance.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { randomRows, rng } from './quant-blocks.js';

const testing = loadNativeBinding().testing;
const flags = process.platform === 'linux' ? (/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/) ?? []) : [];
const cpuHasAmx = process.arch === 'x64' && ['amx_tile', 'amx_int8'].every((f) => flags.includes(f));
const status = testing.amxStatus();

function randomInput(T: number, K: number, seed: number): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: T * K }, () => (r() - 0.5) * (r() < 0.05 ? 20 : 2));
}

describe('AMX kernels', () => {
  it('amxStatus() reports them unusable, with the reason, where the CPU has no AMX', () => {
    expect(typeof status.reason).toBe('string');
    expect(status.reason.length).toBeGreaterThan(0);
    if (!cpuHasAmx) {
      expect(status.usable).toBe(false);
      expect(status.reason).toMatch(/no AMX|no AMX kernels|Linux only/);
    }
  });

  it.skipIf(status.usable)('quantMatmul("amx") refuses where they cannot run, saying why', () => {
    const [N, K, T] = [16, 64, 16];
    const w = randomRows('Q8_0', N, K, 1);
    expect(() => testing.quantMatmul('amx', 'Q8_0', w, randomInput(T, K, 2), T, N, K, 1)).toThrow(
      new RegExp(`cannot run the amx kernels: ${status.reason.replace(/[()]/g, '\\$&')}`),
    );
  });

  it.skipIf(!status.usable)('take Q8_0 only', () => {
    const w = randomRows('Q4_0', 16, 64, 3);
    expect(() => testing.quantMatmul('amx', 'Q4_0', w, randomInput(16, 64, 4), 16, 16, 64, 1)).toThrow(/Q8_0 only/);
  });

  it.skipIf(!status.usable)('equal the avx512vnni kernels bit for bit: tails of tokens, rows and groups, long K, bias, threads', () => {
    for (const [N, K] of [[13, 96], [40, 1056], [1003, 3072], [24, 32]] as const) {
      const w = randomRows('Q8_0', N, K, N + K);
      const bias = Float32Array.from({ length: N }, (_, i) => Math.sin(i));
      for (const T of [1, 15, 16, 17, 33, 64, 70]) {
        const input = randomInput(T, K, 7 * T + K);
        for (const threads of [1, 3]) {
          const b = (T + threads) % 2 === 0 ? bias : undefined;
          expect(testing.quantMatmul('amx', 'Q8_0', w, input, T, N, K, threads, b)).toEqual(
            testing.quantMatmul('avx512vnni', 'Q8_0', w, input, T, N, K, threads, b),
          );
        }
      }
    }
  });
});
