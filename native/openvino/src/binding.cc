// N-API binding of the OpenVINO runner: module weft_openvino.node.
//
//   abiVersion, openvinoVersion                 numbers / string
//   availableDevices()                          -> string[] (ov::Core::get_available_devices)
//   describeDevice(device)                      -> { plugins, properties } (device_report.h; for `weft doctor`)
//   new OvModel()
//     load(xmlPath, device, properties)         -> Promise<info>  (read, convert, compile)
//     allocateCache(numBlocks, stateBlocks?)    -> Promise<void>  (stateBlocks: linear-attention state tables)
//     execute(inputs, blockCopies?, argmaxRows?) -> Promise<{ logits, argmax? }>  (rows x vocab logits, lent:
//                                                  logits_transfer.h; argmax: greedy_pick of the rows asked for, -1 elsewhere)
//     releaseLogits(array)                      sync; hands a step's logits back for reuse
//     logitsBuffers                             read-only {allocated, lent}: the logits pool (test hook)
//     lastStepTimings()                         -> { marshalMs, inputsMs, inferMs, logitsMs, pickMs, resultMs } of the last step
//     dispose()                                 idempotent
//   testing.greedyPick(values)                  -> number (greedy_pick.h on one row; tests only)
//
// Work runs on the libuv thread pool (weft::PromiseJob,
// native/common/promise_job.h). One operation at a time per model:
// overlapping calls reject (the TypeScript side queues them).
// The runner is shared with the job in flight, so dispose() during a step frees
// it when that step ends. Nothing here ends the process: ov::Exception and
// every other std::exception become rejections.
#include <napi.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include <openvino/core/version.hpp>
#include <openvino/runtime/core.hpp>

#include "device_report.h"
#include "greedy_pick.h"
#include "logits_transfer.h"
#include "promise_job.h"
#include "runner.h"

namespace weft_ov {
namespace {

using weft::LogitsBuffers;
using weft::rejected;

// 3: describeDevice(), testing.greedyPick; OvModel.execute resolves { logits (lent), argmax? }, releaseLogits, logitsBuffers, lastStepTimings.
constexpr int kAbiVersion = 3;

Napi::Object port_list(Napi::Env env, const std::vector<PortInfo>& ports, Napi::Array* out) {
  *out = Napi::Array::New(env, ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", ports[i].name);
    o.Set("type", ports[i].type);
    Napi::Array shape = Napi::Array::New(env, ports[i].shape.size());
    for (size_t d = 0; d < ports[i].shape.size(); ++d) shape.Set(d, Napi::Number::New(env, static_cast<double>(ports[i].shape[d])));
    o.Set("shape", shape);
    out->Set(i, o);
  }
  return Napi::Object::New(env);
}

// A job of one model (promise_job.h): it keeps the model's JS object alive,
// so that `busy` stays valid until it ends, and holds the runner it works on.
class Job : public weft::PromiseJob {
 public:
  Job(Napi::Env env, std::shared_ptr<Runner> runner, bool* busy, Napi::Object self)
      : weft::PromiseJob(env, "weft:openvino", self, busy), runner_(std::move(runner)) {}

 protected:
  std::shared_ptr<Runner> runner_;
};

class OvModel : public Napi::ObjectWrap<OvModel> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "OvModel",
                       {InstanceMethod("load", &OvModel::load), InstanceMethod("allocateCache", &OvModel::allocate_cache),
                        InstanceMethod("execute", &OvModel::execute), InstanceMethod("lastStepTimings", &OvModel::last_step_timings),
                        InstanceMethod("releaseLogits", &OvModel::release_logits),
                        InstanceAccessor("logitsBuffers", &OvModel::logits_buffers, nullptr), InstanceMethod("dispose", &OvModel::dispose)});
  }
  explicit OvModel(const Napi::CallbackInfo& info) : Napi::ObjectWrap<OvModel>(info) {}

 private:
  // Every argument error returns a rejected promise (weft::rejected) instead of throwing.
  Napi::Value load(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (busy_) return rejected(env, "another operation is in flight on this model");
    if (runner_ || disposed_) return rejected(env, disposed_ ? "the model has been disposed" : "the model is already loaded");
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsObject())
      return rejected(env, "load(xmlPath: string, device: string, properties: Record<string, string>)");
    LoadOptions options;
    options.xml_path = info[0].As<Napi::String>().Utf8Value();
    options.device = info[1].As<Napi::String>().Utf8Value();
    Napi::Object props = info[2].As<Napi::Object>();
    Napi::Array keys = props.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); ++i) {
      Napi::Value key = keys.Get(i), value = props.Get(key);
      if (!value.IsString()) return rejected(env, "property " + key.ToString().Utf8Value() + " must be a string");
      options.properties[key.ToString().Utf8Value()] = value.As<Napi::String>().Utf8Value();
    }
    struct LoadJob : Job {
      LoadJob(Napi::Env env, OvModel* self, LoadOptions o) : Job(env, nullptr, &self->busy_, self->Value()), self_(self), options_(std::move(o)) {}
      void Execute() override {
        guarded([&] { loaded_ = Runner::load(options_); });
      }
      Napi::Value result(Napi::Env env) override {
        if (self_->disposed_) throw std::runtime_error("the model was disposed while loading");
        self_->runner_ = std::move(loaded_);
        const Runner& r = *self_->runner_;
        Napi::Object o = Napi::Object::New(env);
        Napi::Array inputs, outputs;
        port_list(env, r.inputs(), &inputs);
        port_list(env, r.outputs(), &outputs);
        o.Set("inputs", inputs);
        o.Set("outputs", outputs);
        o.Set("converted", r.converted());
        o.Set("device", r.device());
        o.Set("bytesPerBlock", Napi::Number::New(env, static_cast<double>(r.bytes_per_block())));
        o.Set("stateBytesPerBlock", Napi::Number::New(env, static_cast<double>(r.state_bytes_per_block())));
        return o;
      }
      OvModel* self_;
      LoadOptions options_;
      std::shared_ptr<Runner> loaded_;
    };
    auto* job = new LoadJob(env, this, std::move(options));
    return job->queue();
  }

  Napi::Value allocate_cache(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (busy_) return rejected(env, "another operation is in flight on this model");
    if (!runner_) return rejected(env, disposed_ ? "the model has been disposed" : "the model is not loaded");
    if (info.Length() < 1 || !info[0].IsNumber()) return rejected(env, "allocateCache(numBlocks: number, stateBlocks?: number)");
    const double blocks = info[0].As<Napi::Number>().DoubleValue();
    if (!(blocks >= 1 && blocks <= 1e9) || blocks != static_cast<double>(static_cast<int64_t>(blocks)))
      return rejected(env, "numBlocks must be an integer in [1, 1e9]");
    double state_blocks = 0;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      if (!info[1].IsNumber()) return rejected(env, "stateBlocks must be a number");
      state_blocks = info[1].As<Napi::Number>().DoubleValue();
      if (!(state_blocks >= 0 && state_blocks <= 1e9) || state_blocks != static_cast<double>(static_cast<int64_t>(state_blocks)))
        return rejected(env, "stateBlocks must be an integer in [0, 1e9]");
    }
    struct AllocJob : Job {
      AllocJob(Napi::Env env, std::shared_ptr<Runner> r, bool* busy, Napi::Object self, int64_t n, int64_t states)
          : Job(env, std::move(r), busy, self), n_(n), states_(states) {}
      void Execute() override {
        guarded([&] { runner_->allocate_cache(n_, states_); });
      }
      int64_t n_, states_;
    };
    auto* job = new AllocJob(env, runner_, &busy_, Value(), static_cast<int64_t>(blocks), static_cast<int64_t>(state_blocks));
    return job->queue();
  }

  // inputs: Array<{ name: string, data: Int32Array | Float32Array, shape: number[] }>
  Napi::Value execute(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (busy_) return rejected(env, "another operation is in flight on this model");
    if (!runner_) return rejected(env, disposed_ ? "the model has been disposed" : "the model is not loaded");
    if (info.Length() < 1 || !info[0].IsArray()) return rejected(env, "execute(inputs: Array<{name, data, shape}>, blockCopies?)");
    const auto marshal_start = std::chrono::steady_clock::now();
    std::vector<StepInput> inputs;
    std::vector<int32_t> copies;
    std::vector<uint8_t> argmax_rows;
    try {
      Napi::Array list = info[0].As<Napi::Array>();
      for (uint32_t i = 0; i < list.Length(); ++i) {
        Napi::Value item = list.Get(i);
        if (!item.IsObject()) return rejected(env, "each input must be an object");
        Napi::Object o = item.As<Napi::Object>();
        StepInput in;
        if (!o.Get("name").IsString()) return rejected(env, "input.name must be a string");
        in.name = o.Get("name").As<Napi::String>().Utf8Value();
        Napi::Value data = o.Get("data");
        if (!data.IsTypedArray()) return rejected(env, in.name + ": data must be an Int32Array or a Float32Array");
        Napi::TypedArray typed = data.As<Napi::TypedArray>();
        if (typed.TypedArrayType() == napi_int32_array) {
          Napi::Int32Array a = data.As<Napi::Int32Array>();
          in.ints.assign(a.Data(), a.Data() + a.ElementLength());
        } else if (typed.TypedArrayType() == napi_float32_array) {
          Napi::Float32Array a = data.As<Napi::Float32Array>();
          in.is_float = true;
          in.floats.assign(a.Data(), a.Data() + a.ElementLength());
        } else {
          return rejected(env, in.name + ": data must be an Int32Array or a Float32Array");
        }
        Napi::Value shape = o.Get("shape");
        if (!shape.IsArray()) return rejected(env, in.name + ": shape must be an array");
        Napi::Array dims = shape.As<Napi::Array>();
        for (uint32_t d = 0; d < dims.Length(); ++d) {
          Napi::Value dim = dims.Get(d);
          if (!dim.IsNumber()) return rejected(env, in.name + ": shape entries must be numbers");
          const double v = dim.As<Napi::Number>().DoubleValue();
          if (!(v >= 0 && v <= 1e12) || v != static_cast<double>(static_cast<int64_t>(v)))
            return rejected(env, in.name + ": shape entries must be non-negative integers");
          in.shape.push_back(static_cast<size_t>(v));
        }
        inputs.push_back(std::move(in));
      }
      if (info.Length() > 1 && info[1].IsTypedArray()) {
        if (info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) return rejected(env, "blockCopies must be an Int32Array");
        Napi::Int32Array a = info[1].As<Napi::Int32Array>();
        copies.assign(a.Data(), a.Data() + a.ElementLength());
      }
      if (info.Length() > 2 && !info[2].IsUndefined()) {
        if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
          return rejected(env, "argmaxRows must be a Uint8Array");
        Napi::Uint8Array a = info[2].As<Napi::Uint8Array>();
        argmax_rows.assign(a.Data(), a.Data() + a.ElementLength());
      }
    } catch (const Napi::Error& e) {
      return rejected(env, e.Value());
    }
    marshal_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - marshal_start).count();
    struct StepJob : Job {
      StepJob(Napi::Env env, OvModel* model, std::vector<StepInput> in, std::vector<int32_t> copies, std::vector<uint8_t> argmax_rows)
          : Job(env, model->runner_, &model->busy_, model->Value()),
            model_(model),
            buffers_(model->logits_buffers_),
            inputs_(std::move(in)),
            copies_(std::move(copies)),
            argmax_rows_(std::move(argmax_rows)) {}
      void Execute() override {
        guarded([&] {
          runner_->copy_blocks(copies_);
          runner_->step(inputs_, &rows_, &vocab_);
          if (!argmax_rows_.empty() && argmax_rows_.size() != rows_)
            throw std::runtime_error("argmaxRows has " + std::to_string(argmax_rows_.size()) + " entries for " + std::to_string(rows_) + " logits rows");
          // Straight from the output tensor into the buffer JavaScript will read: no vector in between,
          // no zero-fill, no copy on the main thread.
          logits_ = buffers_->take(rows_ * vocab_);
          runner_->read_logits(logits_.data.get());
          const auto pick_start = std::chrono::steady_clock::now();
          if (!argmax_rows_.empty() && vocab_ > 0) {
            argmax_.assign(rows_, -1);
            for (size_t r = 0; r < rows_; ++r)
              if (argmax_rows_[r] != 0) argmax_[r] = greedy_pick(logits_.data.get() + r * vocab_, vocab_);
          }
          pick_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - pick_start).count();
        });
      }
      Napi::Value result(Napi::Env env) override {
        const auto start = std::chrono::steady_clock::now();
        Napi::Object out = Napi::Object::New(env);
        out.Set("logits", buffers_->to_js(env, std::move(logits_), rows_ * vocab_, false));
        if (!argmax_.empty()) {
          Napi::Int32Array picks = Napi::Int32Array::New(env, argmax_.size());
          std::copy(argmax_.begin(), argmax_.end(), picks.Data());
          out.Set("argmax", picks);
        }
        model_->timings_ = runner_->last_timings();
        model_->pick_ms_ = pick_ms_;
        model_->result_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return out;
      }
      OvModel* model_;  // alive: the job holds its JS object (Job)
      std::shared_ptr<LogitsBuffers> buffers_;
      std::vector<StepInput> inputs_;
      std::vector<int32_t> copies_;
      std::vector<uint8_t> argmax_rows_;
      LogitsBuffers::Buffer logits_;
      std::vector<int32_t> argmax_;
      size_t rows_ = 0, vocab_ = 0;
      double pick_ms_ = 0;
    };
    auto* job = new StepJob(env, this, std::move(inputs), std::move(copies), std::move(argmax_rows));
    return job->queue();
  }

  // The last finished step's timings: marshalMs (copying the JS arrays, main thread), inputsMs,
  // inferMs and logitsMs (worker thread, runner.h StepTimings), pickMs (greedy_pick of the argmax
  // rows, worker thread), resultMs (lending the logits, main thread).
  Napi::Value last_step_timings(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("marshalMs", marshal_ms_);
    o.Set("inputsMs", timings_.inputs_ms);
    o.Set("inferMs", timings_.infer_ms);
    o.Set("logitsMs", timings_.logits_ms);
    o.Set("pickMs", pick_ms_);
    o.Set("resultMs", result_ms_);
    return o;
  }

  Napi::Value release_logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1) throw Napi::TypeError::New(env, "releaseLogits(logits)");
    return Napi::Boolean::New(env, logits_buffers_->release(env, info[0]));
  }

  Napi::Value logits_buffers(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("allocated", Napi::Number::New(info.Env(), static_cast<double>(logits_buffers_->allocated())));
    o.Set("lent", Napi::Number::New(info.Env(), static_cast<double>(logits_buffers_->lent())));
    return o;
  }

  Napi::Value dispose(const Napi::CallbackInfo& info) {
    disposed_ = true;
    runner_.reset();  // a job in flight keeps its own reference until it ends
    return info.Env().Undefined();
  }

  std::shared_ptr<Runner> runner_;
  bool busy_ = false;
  bool disposed_ = false;
  StepTimings timings_;
  double marshal_ms_ = 0, pick_ms_ = 0, result_ms_ = 0;
  // Shared with every lent array, so one finalized after dispose still has a pool to return to.
  std::shared_ptr<LogitsBuffers> logits_buffers_ = std::make_shared<LogitsBuffers>();
};

Napi::Value available_devices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    ov::Core core;
    const auto devices = core.get_available_devices();
    Napi::Array out = Napi::Array::New(env, devices.size());
    for (size_t i = 0; i < devices.size(); ++i) out.Set(i, devices[i]);
    return out;
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

// Synchronous: it reads properties, compiles nothing (milliseconds), and only `weft doctor` calls it.
Napi::Value describe_device_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "describeDevice(device: string)");
  DeviceReport report;
  try {
    ov::Core core;
    report = describe_device(core, info[0].As<Napi::String>().Utf8Value());
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
  Napi::Object out = Napi::Object::New(env);
  Napi::Array plugins = Napi::Array::New(env, report.plugins.size());
  for (size_t i = 0; i < report.plugins.size(); ++i) {
    Napi::Object p = Napi::Object::New(env);
    p.Set("name", report.plugins[i].name);
    p.Set("buildNumber", report.plugins[i].build_number);
    p.Set("description", report.plugins[i].description);
    plugins.Set(i, p);
  }
  Napi::Array properties = Napi::Array::New(env, report.properties.size());
  for (size_t i = 0; i < report.properties.size(); ++i) {
    Napi::Object p = Napi::Object::New(env);
    p.Set("name", report.properties[i].name);
    if (report.properties[i].error.empty()) p.Set("value", report.properties[i].value);
    else p.Set("error", report.properties[i].error);
    properties.Set(i, p);
  }
  out.Set("plugins", plugins);
  out.Set("properties", properties);
  return out;
}

// testing.greedyPick(Float32Array): the worker's pick on one row, so tests can hold it to the
// engine's argmax on rows a model never produces (NaN, infinities, signed zeros, ties).
Napi::Value greedy_pick_js(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw Napi::TypeError::New(env, "greedyPick(values: Float32Array)");
  Napi::Float32Array values = info[0].As<Napi::Float32Array>();
  if (values.ElementLength() == 0) throw Napi::RangeError::New(env, "greedyPick: an empty row has no pick");
  return Napi::Number::New(env, greedy_pick(values.Data(), values.ElementLength()));
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, kAbiVersion));
  exports.Set("openvinoVersion", std::string(ov::get_openvino_version().buildNumber));
  exports.Set("availableDevices", Napi::Function::New(env, available_devices));
  exports.Set("describeDevice", Napi::Function::New(env, describe_device_js));
  exports.Set("OvModel", OvModel::define(env));
  Napi::Object testing = Napi::Object::New(env);
  testing.Set("greedyPick", Napi::Function::New(env, greedy_pick_js));
  exports.Set("testing", testing);
  return exports;
}

}  // namespace
}  // namespace weft_ov

static Napi::Object InitAll(Napi::Env env, Napi::Object exports) { return weft_ov::init(env, exports); }
NODE_API_MODULE(weft_openvino, InitAll)
