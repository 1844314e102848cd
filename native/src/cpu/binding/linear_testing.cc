// Test hooks for the Gated DeltaNet kernels (kernels/linear/gated_delta.h):
// one kernel set's delta rule or conv on given data, its tokens given to the
// kernel in calls of `split` tokens and its columns (channels) in ranges of
// `columns`, so a test can check that the bits do not depend on either, in
// every set this CPU supports, in one process. Every size is checked; a bad one
// throws a JS error; a set this CPU or build cannot run gives null.
#include "binding/linear_testing.h"

#include <algorithm>
#include <string>

#include "kernels/linear/gated_delta.h"

namespace weft {
namespace {

KernelSet set_named(Napi::Env env, const Napi::Value& v) {
  const std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  for (KernelSet k : {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni})
    if (s == kernel_set_name(k)) return k;
  throw Napi::TypeError::New(env, "unknown kernel set " + s);
}

int in_range(Napi::Env env, const Napi::Value& v, const char* name, int lo, int hi) {
  if (!v.IsNumber() || v.As<Napi::Number>().DoubleValue() < lo || v.As<Napi::Number>().DoubleValue() > hi)
    throw Napi::RangeError::New(env, std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v.As<Napi::Number>().Int32Value();
}

Napi::Float32Array floats(Napi::Env env, const Napi::Object& o, const char* name, size_t n) {
  const Napi::Value v = o.Get(name);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw Napi::TypeError::New(env, std::string(name) + " must be a Float32Array");
  Napi::Float32Array a = v.As<Napi::Float32Array>();
  if (a.ElementLength() != n) throw Napi::RangeError::New(env, std::string(name) + " must hold " + std::to_string(n) + " floats");
  return a;
}

Napi::Float32Array copy_of(Napi::Env env, const Napi::Float32Array& a) {
  Napi::Float32Array out = Napi::Float32Array::New(env, a.ElementLength());
  std::copy(a.Data(), a.Data() + a.ElementLength(), out.Data());
  return out;
}

// deltaRule(set, { dk, dv, tokens, state, qkv, logDecay, beta, split, columns }) -> { state, out } | null
// One value head: state [dk][dv]; qkv [tokens][dk + dk + dv], each token's q | k | v in one row as the
// layer's rows hold them; logDecay and beta [tokens]; out [tokens][dv].
Napi::Value delta_rule_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject()) throw Napi::TypeError::New(env, "deltaRule(set, { dk, dv, tokens, state, qkv, logDecay, beta, split, columns })");
  const LinearAttentionKernels* kernels = linear_attention_kernels_of(set_named(env, info[0]));
  const Napi::Object a = info[1].As<Napi::Object>();
  const int dk = in_range(env, a.Get("dk"), "dk", 1, 512), dv = in_range(env, a.Get("dv"), "dv", 1, 512);
  const int T = in_range(env, a.Get("tokens"), "tokens", 1, 1 << 16);
  const int split = in_range(env, a.Get("split"), "split", 1, 1 << 16), columns = in_range(env, a.Get("columns"), "columns", 1, 512);
  const size_t row = 2 * static_cast<size_t>(dk) + dv;
  Napi::Float32Array state = copy_of(env, floats(env, a, "state", static_cast<size_t>(dk) * dv));
  const Napi::Float32Array qkv = floats(env, a, "qkv", T * row);
  const Napi::Float32Array g = floats(env, a, "logDecay", T), beta = floats(env, a, "beta", T);
  if (!kernels) return env.Null();
  Napi::Float32Array out = Napi::Float32Array::New(env, static_cast<size_t>(T) * dv);
  for (int t0 = 0; t0 < T; t0 += split)
    for (int j0 = 0; j0 < dv; j0 += columns) {
      DeltaRuleRun run;
      run.state = state.Data();
      run.dk = dk;
      run.dv = dv;
      run.col_begin = j0;
      run.col_end = std::min(dv, j0 + columns);
      run.tokens = std::min(split, T - t0);
      run.q = qkv.Data() + t0 * row;
      run.k = run.q + dk;
      run.v = run.k + dk;
      run.qkv_stride = row;
      run.log_decay = g.Data() + t0;
      run.beta = beta.Data() + t0;
      run.gate_stride = 1;
      run.out = out.Data() + static_cast<size_t>(t0) * dv;
      run.out_stride = dv;
      kernels->delta_rule(run);
    }
  Napi::Object result = Napi::Object::New(env);
  result.Set("state", state);
  result.Set("out", out);
  return result;
}

// convSilu(set, { channels, K, tokens, rows, taps, window, split, columns }) -> { rows, window } | null
// rows [tokens][channels], taps [channels][K], window [K-1][channels].
Napi::Value conv_silu_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject()) throw Napi::TypeError::New(env, "convSilu(set, { channels, K, tokens, rows, taps, window, split, columns })");
  const LinearAttentionKernels* kernels = linear_attention_kernels_of(set_named(env, info[0]));
  const Napi::Object a = info[1].As<Napi::Object>();
  const int C = in_range(env, a.Get("channels"), "channels", 1, 1 << 16), K = in_range(env, a.Get("K"), "K", 1, 16);
  const int T = in_range(env, a.Get("tokens"), "tokens", 1, 1 << 16);
  const int split = in_range(env, a.Get("split"), "split", 1, 1 << 16), columns = in_range(env, a.Get("columns"), "columns", 1, 1 << 16);
  Napi::Float32Array rows = copy_of(env, floats(env, a, "rows", static_cast<size_t>(T) * C));
  const Napi::Float32Array taps = floats(env, a, "taps", static_cast<size_t>(C) * K);
  Napi::Float32Array window = copy_of(env, floats(env, a, "window", static_cast<size_t>(K - 1) * C));
  if (!kernels) return env.Null();
  for (int t0 = 0; t0 < T; t0 += split)
    for (int c0 = 0; c0 < C; c0 += columns) {
      ConvRun run;
      run.rows = rows.Data() + static_cast<size_t>(t0) * C + c0;
      run.row_stride = C;
      run.tokens = std::min(split, T - t0);
      run.taps = taps.Data() + static_cast<size_t>(c0) * K;
      run.K = K;
      run.window = window.Data() + c0;
      run.window_stride = C;
      run.channels = std::min(columns, C - c0);
      kernels->conv_silu(run);
    }
  Napi::Object result = Napi::Object::New(env);
  result.Set("rows", rows);
  result.Set("window", window);
  return result;
}

}  // namespace

void register_linear_testing(Napi::Env env, Napi::Object testing) {
  testing.Set("deltaRule", Napi::Function::New(env, delta_rule_js));
  testing.Set("convSilu", Napi::Function::New(env, conv_silu_js));
}

}  // namespace weft
