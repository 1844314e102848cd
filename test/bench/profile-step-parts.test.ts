// The name rules of bench/profile-step (parts.ts), on demangled names taken
// from real callgrind runs of `npm run profile:step` (Q8_0, Q4_K_M and F16, avx2
// kernel set, 1 and 2 threads), so a rule that stops matching the native
// code's names fails here rather than moving instructions to another row.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chargedToCaller, classify, kernelLabel, weightTypeNames, withoutArguments } from '../../bench/profile-step/parts.js';

const NATIVE = '/work/wt/x/native/build/Release/weft_native.node';
const LIBC = '/usr/lib/x86_64-linux-gnu/libc.so.6';
const LIBM = '/usr/lib/x86_64-linux-gnu/libm.so.6';
const NODE = '/usr/bin/node';

describe('profile-step parts', () => {
  it('counts every weight-matmul kernel and its dispatch as matmul', () => {
    for (const fn of [
      'void weft::(anonymous namespace)::group_rows<(weft::WeightType)3>(float*, weft::QuantizedInput const&, unsigned char const*, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long)',
      'weft::(anonymous namespace)::run_group_parts(weft::KernelSet, void (*)(weft::WeightType, float*, weft::QuantizedInput const&, unsigned char const*, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long), weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int, bool)',
      'weft::ThreadPool::parallel_for_guided<weft::(anonymous namespace)::run_group_parts(weft::KernelSet, void (*)(weft::WeightType, float*, weft::QuantizedInput const&, unsigned char const*, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long), weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int, bool)::{lambda(unsigned long, unsigned long, int)#1}>(unsigned long, unsigned long, weft::(anonymous namespace)::run_group_parts(weft::KernelSet, void (*)(weft::WeightType, float*, weft::QuantizedInput const&, unsigned char const*, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long), weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int, bool)::{lambda(unsigned long, unsigned long, int)#1} const&)',
      'weft::(anonymous namespace)::project_parts(weft::KernelSet, weft::KernelSet, bool, weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int)',
      'weft::project(weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int)',
      'weft::rows_f16_avx2(float*, float const*, void const*, float const*, int, int, int, unsigned long, unsigned long, float*)',
      'weft::(anonymous namespace)::run_parts(void (* const*)(float*, float const*, void const*, float const*, int, int, int, unsigned long, unsigned long, float*), weft::ThreadPool&, float const*, int, int, weft::MatmulPart const*, int)',
      'weft::kquant_groups_avx2(weft::WeightType, float*, weft::KQuantInput const&, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long)',
      'void weft::(anonymous namespace)::k_groups<(weft::WeightType)5>(float*, weft::KQuantInput const&, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long)',
      // The pool's call thunk of a chunk lambda: the owner (kquant_project) names it.
      'weft::ThreadPool::parallel_for_guided<weft::kquant_project(weft::KernelSet, weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int)::{lambda(unsigned long, unsigned long, int)#1}>(unsigned long, unsigned long, weft::kquant_project(weft::KernelSet, weft::ThreadPool&, weft::MatmulScratch&, float const*, int, int, weft::MatmulPart const*, int)::{lambda(unsigned long, unsigned long, int)#1} const&)::{lambda(void const*, unsigned long, unsigned long, int)#1}::_FUN(void const*, unsigned long, unsigned long, int)',
    ])
      expect(classify(fn, NATIVE), fn).toBe('matmul');
  });

  it('tells the tile attention kernel and its loop from the per-token RoPE loop of the same block', () => {
    const loop = (n: number) =>
      `weft::ThreadPool::parallel_for<weft::(anonymous namespace)::attention_block(weft::Model&, weft::StepInput const&, weft::StepState&, int)::{lambda(unsigned long, unsigned long, int)#${n}}>(unsigned long, unsigned long, weft::(anonymous namespace)::attention_block(weft::Model&, weft::StepInput const&, weft::StepState&, int)::{lambda(unsigned long, unsigned long, int)#${n}} const&)`;
    expect(classify(loop(1), NATIVE)).toBe('norms');
    expect(classify(loop(2), NATIVE)).toBe('attention');
    for (const fn of [
      'void weft::(anonymous namespace)::attend_block<128, float>(float const*, float const*, long, int, int, float, weft::QueryRow const*, int, weft::(anonymous namespace)::RowState const&) [clone .constprop.0]',
      'void weft::(anonymous namespace)::attend_block<128, unsigned short>(unsigned short const*, unsigned short const*, long, int, int, float, weft::QueryRow const*, int, weft::(anonymous namespace)::RowState const&) [clone .constprop.0]',
      'weft::attend_avx2(weft::KvView const&, int, int, int const*, weft::QueryRow const*, int, float*)',
      'weft::KvCache::view() const',
    ])
      expect(classify(fn, NATIVE), fn).toBe('attention');
  });

  it('sends norms, SiLU, quantizing, KV writes and step setup to their own parts', () => {
    expect(classify('weft::ThreadPool::parallel_for<weft::(anonymous namespace)::add_and_norm(weft::Model&, weft::StepState&, weft::Tensor const&, bool)::{lambda(unsigned long, unsigned long, int)#1}>(unsigned long, unsigned long, weft::(anonymous namespace)::add_and_norm(weft::Model&, weft::StepState&, weft::Tensor const&, bool)::{lambda(unsigned long, unsigned long, int)#1} const&)', NATIVE)).toBe('norms');
    expect(classify('weft::(anonymous namespace)::silu_mul_vec(float*, float const*, unsigned long)', NATIVE)).toBe('norms');
    expect(classify('weft::ThreadPool::parallel_for<weft::(anonymous namespace)::mlp_block(weft::Model&, weft::StepState&, int)::{lambda(unsigned long, unsigned long, int)#1}>(unsigned long, unsigned long, weft::(anonymous namespace)::mlp_block(weft::Model&, weft::StepState&, int)::{lambda(unsigned long, unsigned long, int)#1} const&)', NATIVE)).toBe('norms');
    expect(classify('weft::quantize_input_avx2(float const*, int, signed char*, float*, int*)', NATIVE)).toBe('quantize');
    expect(classify('weft::quantize_input_k_avx2(float const*, int, signed char*, float*, short*, short*, int*)', NATIVE)).toBe('quantize');
    // The lambda's owner names the part, not the owner's argument types (MatmulScratch, ThreadPool).
    expect(classify('weft::ThreadPool::parallel_for<weft::(anonymous namespace)::quantize_activations(weft::KernelSet, weft::ThreadPool&, float const*, weft::WeightType, int, int, weft::MatmulScratch&)::{lambda(unsigned long, unsigned long, int)#1}>(unsigned long, unsigned long, weft::(anonymous namespace)::quantize_activations(weft::KernelSet, weft::ThreadPool&, float const*, weft::WeightType, int, int, weft::MatmulScratch&)::{lambda(unsigned long, unsigned long, int)#1} const&)', NATIVE)).toBe('quantize');
    expect(classify('weft::KvCache::write_row(int, int, unsigned long, int, unsigned long, float const*)', NATIVE)).toBe('kv');
    // The embedding's dequantize_row is step setup, not quantizing activations.
    expect(classify('weft::dequantize_row(weft::WeightType, unsigned char const*, float*, long)', NATIVE)).toBe('setup');
    expect(classify('weft::unpack_row(weft::WeightType, unsigned char const*, long, long, long, unsigned char*)', NATIVE)).toBe('setup');
    expect(classify('weft::forward(weft::Model&, weft::StepInput const&, float*)', NATIVE)).toBe('setup');
  });

  it('keeps the pool, allocation, libc helpers and JS apart', () => {
    for (const fn of ['weft::ThreadPool::run(unsigned long, unsigned long, bool, weft::ThreadPool::Job)', 'weft::ThreadPool::worker_loop(int)', 'weft::ThreadPool::run_chunks(int)'])
      expect(classify(fn, NATIVE), fn).toBe('sync');
    expect(classify('__futex_abstimed_wait_common', LIBC)).toBe('sync');
    expect(classify('_int_malloc', LIBC)).toBe('allocation');
    expect(classify('std::vector<float, std::allocator<float> >::_M_default_append(unsigned long)', NATIVE)).toBe('allocation');
    expect(classify('__memset_avx2_unaligned_erms', LIBC)).toBe('copies');
    expect(classify('v8::internal::Sweeper::RawSweep(v8::internal::Page*, v8::internal::FreeSpaceTreatmentMode, v8::internal::Sweeper::SweepingMode)', NODE)).toBe('js');
    expect(classify('0x000000000d0b5d40', '???')).toBe('js');
    // Charged to their callers (run.ts): a kernel's memset counts with the kernel, node's mutex with the JS.
    expect(chargedToCaller('__memset_avx2_unaligned_erms', LIBC)).toBe(true);
    expect(chargedToCaller('__expf_fma', LIBM)).toBe(true);
    expect(chargedToCaller('pthread_mutex_lock@@GLIBC_2.2.5', LIBC)).toBe(true);
    expect(chargedToCaller('pthread_cond_wait@@GLIBC_2.3.2', LIBC)).toBe(true);
    expect(chargedToCaller('__popcountdi2', '/usr/lib/x86_64-linux-gnu/libgcc_s.so.1')).toBe(true);
    expect(chargedToCaller('_int_malloc', LIBC)).toBe(false);
    expect(chargedToCaller('weft::KvCache::write_row(int, int, unsigned long, int, unsigned long, float const*)', NATIVE)).toBe(false);
  });

  it('names kernels without their arguments, with the weight type spelt out from the native header', () => {
    const types = weightTypeNames(readFileSync(new URL('../../native/src/cpu/kernels/matmul_types.h', import.meta.url), 'utf8'));
    expect(types.slice(0, 4)).toEqual(['F32', 'F16', 'BF16', 'Q8_0']);
    expect(kernelLabel('void weft::(anonymous namespace)::group_rows<(weft::WeightType)3>(float*, weft::QuantizedInput const&, unsigned char const*, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long)', types)).toBe('group_rows<Q8_0>');
    expect(kernelLabel('void weft::(anonymous namespace)::k_groups<(weft::WeightType)6>(float*, weft::KQuantInput const&, unsigned char const*, float const*, int, int, int, unsigned long, unsigned long)', types)).toBe('k_groups<Q6_K>');
    expect(withoutArguments('weft::KvCache::view() const')).toBe('weft::KvCache::view');
    expect(withoutArguments('Builtins_CallFunction_ReceiverIsAny\'2')).toBe('Builtins_CallFunction_ReceiverIsAny');
  });
});
