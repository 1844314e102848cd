// Test hooks of the native sampler (see sampler.h, js_math.h):
//   sampleRow(kernel, values, params, seen, counted, counts, mask?)
//     -> {token, flags, max, sum, top: Int32Array} or null when `kernel` ('baseline' | 'avx2' | 'avx512') cannot run here;
//        values (Float32Array, one logits row) is sampled in place and put back as it was (masked, with a mask).
//   jsExp(kernel, x: Float64Array) -> Float64Array or null; jsLog(x: Float64Array) -> Float64Array.
#include "sample/sample_testing.h"

#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "sample/exp_rows.h"
#include "sample/js_math.h"
#include "sample/sampler.h"

namespace weft {
namespace {

// Whether `kernel` names a set of row passes this process can run: false for avx2 or avx512 on a CPU or build without it.
bool kernel_runs(const Napi::CallbackInfo& info, SampleKernels& kernels) {
  const std::string k = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  if (k == "baseline") kernels = SampleKernels::Scalar;
  else if (k == "avx2") kernels = SampleKernels::Avx2;
  else if (k == "avx512") kernels = SampleKernels::Avx512;
  else throw Napi::TypeError::New(info.Env(), "kernel must be 'baseline', 'avx2' or 'avx512'");
  return sample_kernels_run(kernels);
}

template <class Array>
Array typed(const Napi::CallbackInfo& info, size_t i, napi_typedarray_type type, const char* name) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != type)
    throw Napi::TypeError::New(info.Env(), std::string(name) + " has the wrong type");
  return info[i].As<Array>();
}

Napi::Value sample_row_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SampleKernels kernels = SampleKernels::Scalar;
  if (!kernel_runs(info, kernels)) return env.Null();
  Napi::Float32Array values = typed<Napi::Float32Array>(info, 1, napi_float32_array, "values");
  Napi::Float64Array params = typed<Napi::Float64Array>(info, 2, napi_float64_array, "params");
  Napi::Int32Array seen = typed<Napi::Int32Array>(info, 3, napi_int32_array, "seen");
  Napi::Int32Array counted = typed<Napi::Int32Array>(info, 4, napi_int32_array, "counted");
  Napi::Int32Array counts = typed<Napi::Int32Array>(info, 5, napi_int32_array, "counts");
  const size_t n = values.ElementLength();
  const uint32_t* mask = nullptr;
  if (info.Length() > 6 && !info[6].IsUndefined()) {
    Napi::Uint32Array m = typed<Napi::Uint32Array>(info, 6, napi_uint32_array, "mask");
    if (m.ElementLength() < (n + 31) / 32) throw Napi::RangeError::New(env, "mask must have (values.length + 31) / 32 words");
    mask = m.Data();
  }
  if (n == 0 || n > 0x7FFFFFFF) throw Napi::RangeError::New(env, "values must hold 1 to 2^31 - 1 logits");
  if (counted.ElementLength() != counts.ElementLength()) throw Napi::RangeError::New(env, "counted and counts differ in length");
  SamplingInput in;
  in.rows = {1};
  in.params.assign(params.Data(), params.Data() + params.ElementLength());
  in.seen.assign(seen.Data(), seen.Data() + seen.ElementLength());
  in.seen_begins = {0, static_cast<int32_t>(in.seen.size())};
  in.counted.assign(counted.Data(), counted.Data() + counted.ElementLength());
  in.counts.assign(counts.Data(), counts.Data() + counts.ElementLength());
  in.counted_begins = {0, static_cast<int32_t>(in.counted.size())};
  const std::string problem = validate_sampling(in, 1, static_cast<int32_t>(n));
  if (!problem.empty()) throw Napi::RangeError::New(env, problem);
  // Kept across calls, as each step's thread keeps its own (SamplerScratchPool): a row then costs
  // what it costs in a step, without first touching megabytes of buffers (bench/sampling-rows.bench.ts).
  // The hooks run on the JavaScript thread only.
  static SamplerScratch scratch;
  int32_t token = -1;
  uint8_t flags = 0;
  double stats[2] = {0, 0};
  std::vector<int32_t> top(static_cast<size_t>(in.params[kLogprobs]), -1);
  sample_row(kernels, values.Data(), static_cast<int32_t>(n), in.params.data(), in.seen.data(), in.seen.size(), in.counted.data(),
             in.counts.data(), in.counted.size(), scratch, token, flags, stats, top.data(), mask);
  Napi::Object out = Napi::Object::New(env);
  out.Set("token", Napi::Number::New(env, token));
  out.Set("flags", Napi::Number::New(env, flags));
  out.Set("max", Napi::Number::New(env, stats[0]));
  out.Set("sum", Napi::Number::New(env, stats[1]));
  Napi::Int32Array t = Napi::Int32Array::New(env, top.size());
  for (size_t i = 0; i < top.size(); ++i) t[i] = top[i];
  out.Set("top", t);
  return out;
}

Napi::Value js_exp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SampleKernels kernels = SampleKernels::Scalar;
  if (!kernel_runs(info, kernels)) return env.Null();
  Napi::Float64Array x = typed<Napi::Float64Array>(info, 1, napi_float64_array, "x");
  Napi::Float64Array out = Napi::Float64Array::New(env, x.ElementLength());
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) {
    exp_avx512(x.Data(), out.Data(), static_cast<int32_t>(x.ElementLength()));
    return out;
  }
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels == SampleKernels::Avx2) {
    exp_avx2(x.Data(), out.Data(), static_cast<int32_t>(x.ElementLength()));
    return out;
  }
#endif
  for (size_t i = 0; i < x.ElementLength(); ++i) out[i] = jsmath::exp(x[i]);
  return out;
}

Napi::Value js_log(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Float64Array x = typed<Napi::Float64Array>(info, 0, napi_float64_array, "x");
  Napi::Float64Array out = Napi::Float64Array::New(env, x.ElementLength());
  for (size_t i = 0; i < x.ElementLength(); ++i) out[i] = jsmath::log(x[i]);
  return out;
}

}  // namespace

void register_sample_testing(Napi::Env env, Napi::Object t) {
  t.Set("sampleRow", Napi::Function::New(env, sample_row_js));
  t.Set("jsExp", Napi::Function::New(env, js_exp));
  t.Set("jsLog", Napi::Function::New(env, js_log));
}

}  // namespace weft
