// Test hooks of the native addon (exports.testing): the quantized and float
// matmul kernels of a given set on given data, the CPU's flags and the row
// conversions, so tests can compare every kernel set this CPU supports against
// the baseline in one process. Not used by weft itself. Every size is checked; a bad one throws a JS error.
#include "binding/testing.h"

#include "binding/linear_testing.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/activation/activation.h"
#include "kernels/argmax/argmax.h"
#include "kernels/float/sextets.h"
#include "kernels/half/half_rows.h"
#include "kernels/matmul.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"
#include "sample/sample_testing.h"

namespace weft {
namespace {

WeightType quant_type(Napi::Env env, const Napi::Value& v) {
  const std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (s == "Q8_0") return WeightType::Q8_0;
  if (s == "Q4_0") return WeightType::Q4_0;
  if (s == "Q4_K") return WeightType::Q4_K;
  if (s == "Q6_K") return WeightType::Q6_K;
  throw Napi::TypeError::New(env, "dtype must be Q8_0, Q4_0, Q4_K or Q6_K");
}

KernelSet kernel_set(Napi::Env env, const Napi::Value& v) {
  const std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  for (KernelSet k : {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni})
    if (s == kernel_set_name(k)) return k;
  throw Napi::TypeError::New(env, "unknown kernel set " + s);
}

int positive(Napi::Env env, const Napi::Value& v, const char* name) {
  if (!v.IsNumber() || v.As<Napi::Number>().DoubleValue() < 1 || v.As<Napi::Number>().DoubleValue() > (1 << 24))
    throw Napi::RangeError::New(env, std::string(name) + " must be in [1, 2^24]");
  return v.As<Napi::Number>().Int32Value();
}

// supportedKernelSets() -> string[]
Napi::Value supported_sets(const Napi::CallbackInfo& info) {
  Napi::Array out = Napi::Array::New(info.Env());
  uint32_t n = 0;
  for (KernelSet k : {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni})
    if (cpu_supports(k)) out.Set(n++, kernel_set_name(k));
  return out;
}

// N GGUF rows as weft stores them: Q8_0 / Q4_0 row groups (in place), Q4_K /
// Q6_K k-groups (quant_repack.h).
std::vector<uint8_t> grouped_copy(WeightType type, const uint8_t* rows, int N, int K) {
  if (type == WeightType::Q4_K || type == WeightType::Q6_K) {
    std::vector<uint8_t> groups(kgroup_matrix_bytes(type, N, K));
    pack_kgroups(type, rows, N, K, groups.data());
    return groups;
  }
  std::vector<uint8_t> stored(rows, rows + static_cast<size_t>(N) * quant_row_bytes(type, K));
  if (is_q8_grouped(type)) repack_rows(type, stored.data(), N, K);
  return stored;
}

// amxStatus() -> { usable, reason }: whether the AMX kernels can run here (cpu_features.h).
Napi::Value amx_status_js(const Napi::CallbackInfo& info) {
  const AmxStatus s = cpu_amx_status();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("usable", s.usable);
  out.Set("reason", s.reason);
  return out;
}

// quantMatmul(set, dtype, weights: Uint8Array, input: Float32Array, T, N, K, threads, bias?: Float32Array) -> Float32Array [T][N]
// set "amx": the AMX-INT8 kernel (Q8_0 only, any T); throws where it cannot run, saying why.
Napi::Value quant_matmul_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 8 || !info[2].IsTypedArray() || !info[3].IsTypedArray())
    throw Napi::TypeError::New(env, "quantMatmul(set, dtype, weights, input, T, N, K, threads)");
  const bool amx = info[0].IsString() && info[0].As<Napi::String>().Utf8Value() == "amx";
  const KernelSet set = amx ? KernelSet::Avx512Vnni : kernel_set(env, info[0]);
  const WeightType type = quant_type(env, info[1]);
  const Napi::Uint8Array w = info[2].As<Napi::Uint8Array>();
  const Napi::Float32Array in = info[3].As<Napi::Float32Array>();
  const int T = positive(env, info[4], "T"), N = positive(env, info[5], "N"), K = positive(env, info[6], "K");
  const int threads = positive(env, info[7], "threads");
  if (K % block_format(type).weights != 0) throw Napi::RangeError::New(env, "K must be whole blocks");
  if (w.ByteLength() != static_cast<size_t>(N) * quant_row_bytes(type, K) || in.ElementLength() != static_cast<size_t>(T) * K)
    throw Napi::RangeError::New(env, "weights or input have the wrong size");
  const bool has_bias = info.Length() > 8 && info[8].IsTypedArray();
  if (has_bias && info[8].As<Napi::Float32Array>().ElementLength() != static_cast<size_t>(N))
    throw Napi::RangeError::New(env, "bias must have N values");
  const float* bias = has_bias ? info[8].As<Napi::Float32Array>().Data() : nullptr;
  ThreadPool pool(threads);
  Napi::Float32Array out = Napi::Float32Array::New(env, static_cast<size_t>(T) * N);
  // Weights come as GGUF rows; weft keeps them in row groups (as the loader
  // does): Q8_0 / Q4_0 in place, Q4_K / Q6_K in k-groups.
  std::vector<uint8_t> stored = grouped_copy(type, w.Data(), N, K);
  if (amx) {
    if (!cpu_amx_status().usable) throw Napi::Error::New(env, "this CPU or build cannot run the amx kernels: " + cpu_amx_status().reason);
    if (type != WeightType::Q8_0) throw Napi::TypeError::New(env, "the amx kernels take Q8_0 only");
    quant_matmul_amx_with(pool, out.Data(), in.Data(), stored.data(), type, bias, T, N, K);
    return out;
  }
  if (!quant_matmul_with(set, pool, out.Data(), in.Data(), stored.data(), type, bias, T, N, K))
    throw Napi::Error::New(env, std::string("this CPU or build cannot run the ") + kernel_set_name(set) + " kernels");
  return out;
}

// groupedRows(dtype, weights: Uint8Array, N, K) -> Uint8Array: GGUF rows
// repacked into row groups (quant_repack.h), then every row unpacked again:
// equal to the input when the two are inverse.
Napi::Value grouped_rows_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[1].IsTypedArray()) throw Napi::TypeError::New(env, "groupedRows(dtype, weights, N, K)");
  const WeightType type = quant_type(env, info[0]);
  const Napi::Uint8Array w = info[1].As<Napi::Uint8Array>();
  const int N = positive(env, info[2], "N"), K = positive(env, info[3], "K");
  if (!is_row_grouped(type)) throw Napi::RangeError::New(env, "only Q8_0, Q4_0, Q4_K and Q6_K are kept in row groups");
  if (K % block_format(type).weights != 0 || w.ByteLength() != static_cast<size_t>(N) * quant_row_bytes(type, K))
    throw Napi::RangeError::New(env, "weights have the wrong size");
  const std::vector<uint8_t> grouped = grouped_copy(type, w.Data(), N, K);
  const size_t row_bytes = quant_row_bytes(type, K);
  Napi::Uint8Array out = Napi::Uint8Array::New(env, w.ByteLength());
  for (int n = 0; n < N; ++n) unpack_row(type, grouped.data(), N, K, n, out.Data() + n * row_bytes);
  return out;
}

// floatMatmul(set, dtype, weights, input: Float32Array, bias: Float32Array | null, T, N, K, threads) -> Float32Array [T][N]
// weights: a Float32Array (F32) or a Uint16Array of bits (F16, BF16), N * K elements.
Napi::Value float_matmul_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 9 || !info[2].IsTypedArray() || !info[3].IsTypedArray() || !(info[4].IsNull() || info[4].IsTypedArray()))
    throw Napi::TypeError::New(env, "floatMatmul(set, dtype, weights, input, bias, T, N, K, threads)");
  const KernelSet set = kernel_set(env, info[0]);
  const std::string dtype = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  const WeightType type = dtype == "F32" ? WeightType::F32 : dtype == "F16" ? WeightType::F16 : WeightType::BF16;
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16") throw Napi::TypeError::New(env, "dtype must be F32, F16 or BF16");
  const Napi::TypedArray w = info[2].As<Napi::TypedArray>();
  const napi_typedarray_type want = type == WeightType::F32 ? napi_float32_array : napi_uint16_array;
  if (w.TypedArrayType() != want || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw Napi::TypeError::New(env, "weights must be a Float32Array (F32) or Uint16Array (F16, BF16); input a Float32Array");
  const Napi::Float32Array in = info[3].As<Napi::Float32Array>();
  const int T = positive(env, info[5], "T"), N = positive(env, info[6], "N"), K = positive(env, info[7], "K");
  const int threads = positive(env, info[8], "threads");
  if (w.ElementLength() != static_cast<size_t>(N) * K || in.ElementLength() != static_cast<size_t>(T) * K)
    throw Napi::RangeError::New(env, "weights or input have the wrong size");
  const float* bias = nullptr;
  if (!info[4].IsNull()) {
    const Napi::TypedArray b = info[4].As<Napi::TypedArray>();
    if (b.TypedArrayType() != napi_float32_array || b.ElementLength() != static_cast<size_t>(N))
      throw Napi::RangeError::New(env, "bias must be a Float32Array of N values");
    bias = b.As<Napi::Float32Array>().Data();
  }
  const void* wd = static_cast<const uint8_t*>(w.ArrayBuffer().Data()) + w.ByteOffset();
  ThreadPool pool(threads);
  Napi::Float32Array out = Napi::Float32Array::New(env, static_cast<size_t>(T) * N);
  if (!matmul_with(set, pool, out.Data(), in.Data(), wd, type, bias, T, N, K))
    throw Napi::Error::New(env, std::string("this CPU or build cannot run the ") + kernel_set_name(set) + " kernels");
  return out;
}

// project(set, parts: {dtype, weights, N, bias?, packTail?, sextets?}[], input: Float32Array, T, K, threads) -> Float32Array[]
// One projection (matmul.h) over the parts: weights as floatMatmul (F32/F16/BF16)
// or quantMatmul (GGUF rows; Q8_0 / Q4_0 repacked into row groups, and with
// packTail their N % 8 tail packed once as the loader does, else per call).
Napi::Value project_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6 || !info[1].IsArray() || !info[2].IsTypedArray())
    throw Napi::TypeError::New(env, "project(set, parts, input, T, K, threads)");
  const KernelSet set = kernel_set(env, info[0]);
  const Napi::Array list = info[1].As<Napi::Array>();
  const Napi::Float32Array in = info[2].As<Napi::Float32Array>();
  const int T = positive(env, info[3], "T"), K = positive(env, info[4], "K"), threads = positive(env, info[5], "threads");
  const int count = static_cast<int>(list.Length());
  if (count < 1 || count > kMaxMatmulParts) throw Napi::RangeError::New(env, "1 to kMaxMatmulParts parts");
  if (in.ElementLength() != static_cast<size_t>(T) * K) throw Napi::RangeError::New(env, "input has the wrong size");
  std::vector<std::vector<uint8_t>> weights(count), tails(count);
  std::vector<Napi::Float32Array> outs;
  MatmulPart parts[kMaxMatmulParts];
  for (int p = 0; p < count; ++p) {
    const Napi::Object o = list.Get(p).As<Napi::Object>();
    const std::string dtype = o.Get("dtype").IsString() ? o.Get("dtype").As<Napi::String>().Utf8Value() : "";
    const int N = positive(env, o.Get("N"), "N");
    if (!o.Get("weights").IsTypedArray()) throw Napi::TypeError::New(env, "weights must be a typed array");
    const Napi::TypedArray w = o.Get("weights").As<Napi::TypedArray>();
    const uint8_t* bytes = static_cast<const uint8_t*>(w.ArrayBuffer().Data()) + w.ByteOffset();
    MatmulPart& part = parts[p];
    part.N = N;
    if (dtype == "F32" || dtype == "F16" || dtype == "BF16") {
      part.type = dtype == "F32" ? WeightType::F32 : dtype == "F16" ? WeightType::F16 : WeightType::BF16;
      if (w.ByteLength() != static_cast<size_t>(N) * K * (part.type == WeightType::F32 ? 4 : 2))
        throw Napi::RangeError::New(env, "weights have the wrong size");
      weights[p].assign(bytes, bytes + w.ByteLength());
      // sextets: kept as the loader keeps 16-bit matrices read into memory (sextets.h).
      if (o.Get("sextets").IsBoolean() && o.Get("sextets").As<Napi::Boolean>().Value()) {
        if (part.type == WeightType::F32 || !sextets_fit(K)) throw Napi::RangeError::New(env, "sextets need F16 or BF16 weights and K % 8 == 0");
        std::vector<uint16_t> scratch;
        to_sextets(reinterpret_cast<uint16_t*>(weights[p].data()), K, 0, static_cast<size_t>(N) / kSextetRows, scratch);
        part.sextets = true;
      }
    } else {
      part.type = quant_type(env, o.Get("dtype"));
      const size_t row_bytes = quant_row_bytes(part.type, K);
      if (K % block_format(part.type).weights != 0 || w.ByteLength() != static_cast<size_t>(N) * row_bytes)
        throw Napi::RangeError::New(env, "weights have the wrong size");
      // Stored as the loader stores them (k-groups for Q4_K / Q6_K, row groups for Q8_0 / Q4_0).
      weights[p] = grouped_copy(part.type, bytes, N, K);
      if (is_q8_grouped(part.type)) {
        const bool pack_tail = o.Get("packTail").IsBoolean() && o.Get("packTail").As<Napi::Boolean>().Value();
        if (pack_tail && N % kGroupRows != 0) {
          const uint8_t* rows[kGroupRows];
          for (int r = 0; r < N % kGroupRows; ++r) rows[r] = weights[p].data() + (N / kGroupRows * kGroupRows + r) * row_bytes;
          tails[p].assign(kGroupRows * row_bytes, 0);
          pack_group(part.type, rows, N % kGroupRows, K, tails[p].data());
          part.group_tail = tails[p].data();
        }
      }
    }
    part.w = weights[p].data();
    if (o.Get("bias").IsTypedArray()) {
      const Napi::Float32Array b = o.Get("bias").As<Napi::Float32Array>();
      if (b.ElementLength() != static_cast<size_t>(N)) throw Napi::RangeError::New(env, "bias must have N values");
      part.bias = b.Data();
    }
    outs.push_back(Napi::Float32Array::New(env, static_cast<size_t>(T) * N));
    part.out = outs.back().Data();
  }
  ThreadPool pool(threads);
  MatmulScratch scratch;
  if (!project_with(set, pool, scratch, in.Data(), T, K, parts, count))
    throw Napi::Error::New(env, std::string("this CPU or build cannot run the ") + kernel_set_name(set) + " kernels");
  Napi::Array result = Napi::Array::New(env, count);
  for (int p = 0; p < count; ++p) result.Set(p, outs[p]);
  return result;
}

// cpuFlags() -> string[]: CPUID's instruction-set flags (cpu_features.h).
Napi::Value cpu_flags_js(const Napi::CallbackInfo& info) {
  Napi::Array out = Napi::Array::New(info.Env());
  const std::string names = cpu_flag_names(cpu_flags());
  if (names == "none") return out;
  uint32_t n = 0;
  for (size_t at = 0; at <= names.size();) {
    const size_t comma = std::min(names.find(", ", at), names.size());
    out.Set(n++, names.substr(at, comma - at));
    at = comma + 2;
  }
  return out;
}

// dequantizeRow(dtype, bytes: Uint8Array, K) -> Float32Array
Napi::Value dequantize_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[1].IsTypedArray()) throw Napi::TypeError::New(env, "dequantizeRow(dtype, bytes, K)");
  const WeightType type = quant_type(env, info[0]);
  const Napi::Uint8Array bytes = info[1].As<Napi::Uint8Array>();
  const int K = positive(env, info[2], "K");
  if (K % block_format(type).weights != 0 || bytes.ByteLength() != quant_row_bytes(type, K))
    throw Napi::RangeError::New(env, "bytes must be one row of K weights");
  Napi::Float32Array out = Napi::Float32Array::New(env, K);
  dequantize_row(type, bytes.Data(), out.Data(), K);
  return out;
}

// quantizeRow(dtype, values: Float32Array) -> Uint8Array
Napi::Value quantize_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsTypedArray()) throw Napi::TypeError::New(env, "quantizeRow(dtype, values)");
  const WeightType type = quant_type(env, info[0]);
  const Napi::Float32Array v = info[1].As<Napi::Float32Array>();
  const size_t K = v.ElementLength();
  if (K == 0 || K % 32 != 0 || (type != WeightType::Q8_0 && type != WeightType::Q4_0))
    throw Napi::RangeError::New(env, "quantizeRow takes Q8_0 or Q4_0 and a multiple of 32 values");
  Napi::Uint8Array out = Napi::Uint8Array::New(env, quant_row_bytes(type, static_cast<int64_t>(K)));
  quantize_row(type, v.Data(), out.Data(), static_cast<int64_t>(K));
  return out;
}

// The arguments of the row hooks below, (kernel, values: Float32Array): whether
// the named SIMD kernel (run only where AVX2 is, so `runs` says if it can) or
// the baseline is asked for. Throws a JS error on anything else.
struct RowHookArgs {
  bool simd;
  bool runs;
  Napi::Float32Array values;
};
RowHookArgs row_hook_args(const Napi::CallbackInfo& info, const char* usage, const std::string& simd) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw Napi::TypeError::New(env, std::string(usage) + ": values must be a Float32Array");
  const std::string kernel = info[0].As<Napi::String>();
  if (kernel != "baseline" && kernel != simd) throw Napi::RangeError::New(env, "kernel must be 'baseline' or '" + simd + "'");
  const bool asked = kernel == simd;
  return {asked, !asked || cpu_supports(KernelSet::Avx2), info[1].As<Napi::Float32Array>()};
}

// toHalf(kernel: 'baseline' | 'f16c', values: Float32Array) -> Uint16Array, or
// null when this CPU or build cannot run F16C (half_rows.h).
Napi::Value to_half_js(const Napi::CallbackInfo& info) {
  const RowHookArgs a = row_hook_args(info, "toHalf(kernel, values)", "f16c");
  if (!a.runs) return info.Env().Null();
  Napi::Uint16Array out = Napi::Uint16Array::New(info.Env(), a.values.ElementLength());
#if defined(WEFT_AVX2_KERNELS)
  const ToHalfFn convert = a.simd ? to_half_f16c : to_half_baseline;
#else
  const ToHalfFn convert = to_half_baseline;
#endif
  convert(a.values.Data(), out.Data(), static_cast<int>(a.values.ElementLength()));
  return out;
}

// argmax(kernel: 'baseline' | 'avx2', values: Float32Array) -> number, or null
// when this CPU or build cannot run AVX2 (argmax.h).
Napi::Value argmax_js(const Napi::CallbackInfo& info) {
  const RowHookArgs a = row_hook_args(info, "argmax(kernel, values)", "avx2");
  if (!a.runs) return info.Env().Null();
  const size_t n = a.values.ElementLength();
  if (n == 0 || n > INT32_MAX) throw Napi::RangeError::New(info.Env(), "argmax takes 1 to 2^31 - 1 values");
#if defined(WEFT_AVX2_KERNELS)
  const ArgmaxFn argmax = a.simd ? argmax_avx2 : argmax_baseline;
#else
  const ArgmaxFn argmax = argmax_baseline;
#endif
  return Napi::Number::New(info.Env(), argmax(a.values.Data(), static_cast<int32_t>(n)));
}

// geluErf(set, values: Float32Array) -> Float32Array: the exact GELU of a kernel
// set (activation.h), or null when this CPU or build cannot run that set.
Napi::Value gelu_erf_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 2 || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw Napi::TypeError::New(env, "geluErf(set, values: Float32Array)");
  const GeluFn gelu = gelu_erf_kernel_of(kernel_set(env, info[0]));
  if (gelu == nullptr) return env.Null();
  const Napi::Float32Array in = info[1].As<Napi::Float32Array>();
  Napi::Float32Array out = Napi::Float32Array::New(env, in.ElementLength());
  std::copy(in.Data(), in.Data() + in.ElementLength(), out.Data());
  gelu(out.Data(), out.ElementLength());
  return out;
}

}  // namespace

void register_testing(Napi::Env env, Napi::Object exports) {
  Napi::Object t = Napi::Object::New(env);
  t.Set("supportedKernelSets", Napi::Function::New(env, supported_sets));
  t.Set("quantMatmul", Napi::Function::New(env, quant_matmul_js));
  t.Set("groupedRows", Napi::Function::New(env, grouped_rows_js));
  t.Set("floatMatmul", Napi::Function::New(env, float_matmul_js));
  t.Set("project", Napi::Function::New(env, project_js));
  t.Set("cpuFlags", Napi::Function::New(env, cpu_flags_js));
  t.Set("amxStatus", Napi::Function::New(env, amx_status_js));
  t.Set("dequantizeRow", Napi::Function::New(env, dequantize_js));
  t.Set("quantizeRow", Napi::Function::New(env, quantize_js));
  t.Set("toHalf", Napi::Function::New(env, to_half_js));
  t.Set("argmax", Napi::Function::New(env, argmax_js));
  t.Set("geluErf", Napi::Function::New(env, gelu_erf_js));
  register_sample_testing(env, t);
  register_linear_testing(env, t);
  exports.Set("testing", t);
}

}  // namespace weft
