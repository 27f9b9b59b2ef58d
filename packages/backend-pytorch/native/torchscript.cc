// The TorchScript addon of @tritium/backend-pytorch: loads a module with torch::jit::load
// on libuv's worker threads (Napi::AsyncWorker) and runs its forward() on an instance's
// own thread (InstanceThread), so the event loop never waits on libtorch. Inputs are read
// in place from the callers' typed arrays; outputs are copied into new ArrayBuffers on the loop.
#include <napi.h>

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <ATen/Parallel.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// Triton's datatype names, in the addon's vocabulary, for the dtypes libtorch has.
const std::vector<std::pair<std::string, c10::ScalarType>> kDataTypes = {
    {"BOOL", c10::kBool},  {"UINT8", c10::kByte},  {"INT8", c10::kChar},  {"INT16", c10::kShort},
    {"INT32", c10::kInt},  {"INT64", c10::kLong},  {"FP16", c10::kHalf},  {"BF16", c10::kBFloat16},
    {"FP32", c10::kFloat}, {"FP64", c10::kDouble},
};

std::optional<c10::ScalarType> ScalarTypeOf(const std::string& name) {
  for (const auto& [datatype, scalar] : kDataTypes)
    if (datatype == name) return scalar;
  return std::nullopt;
}

std::string DataTypeOf(c10::ScalarType scalar) {
  for (const auto& [datatype, type] : kDataTypes)
    if (type == scalar) return datatype;
  return std::string("torch.") + c10::toString(scalar);
}

// A c10::Error's message without the C++ backtrace libtorch appends.
std::string Describe(const std::exception& error) {
  if (auto* c10 = dynamic_cast<const c10::Error*>(&error)) return c10->what_without_backtrace();
  return error.what();
}

// Per-run switches, read from the model's config parameters (Triton's names in the TS side).
struct RunOptions {
  bool inferenceMode = true;
  bool optimizedExecution = true;
  std::optional<bool> tensorFuser;
  std::optional<bool> jitExecutor;
  std::optional<bool> jitProfiling;
  bool cacheCleaning = false;
  // forward() takes one Dict[str, Tensor] of the inputs by name, as Triton allows.
  bool dictInput = false;
};

void OptionalFlag(const Napi::Object& options, const char* key, std::optional<bool>& out) {
  Napi::Value value = options.Get(key);
  if (value.IsBoolean()) out = value.As<Napi::Boolean>().Value();
}

struct Loaded {
  torch::jit::Module module;
  c10::Device device;
};

// An input: a view of a JS typed array (referenced until the run is over), or for BYTES
// the List[str] Triton gives forward(), built on the loop.
struct InputView {
  std::string name;  // only for a forward() that takes its inputs by name
  Napi::Reference<Napi::Value> owner;
  void* data = nullptr;
  std::vector<int64_t> shape;
  c10::ScalarType scalar = c10::kFloat;
  std::optional<c10::List<std::string>> strings;
};

// An output: a contiguous CPU tensor, or the strings of a List[str] (BYTES).
struct Result {
  at::Tensor tensor;
  std::optional<std::vector<std::string>> strings;
};

class LoadWorker : public Napi::AsyncWorker {
 public:
  LoadWorker(Napi::Env env, std::string path, c10::Device device)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), path_(std::move(path)), device_(device) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      auto module = torch::jit::load(path_, device_);
      module.eval();
      loaded_ = std::make_shared<Loaded>(Loaded{std::move(module), device_});
    } catch (const std::exception& error) {
      SetError(Describe(error));
    }
  }

  void OnOK() override;
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string path_;
  c10::Device device_;
  std::shared_ptr<Loaded> loaded_;
};

// One forward() call: read on the loop, run on an instance thread, settled back on the loop
// (where its JS references may be dropped).
struct ForwardJob {
  std::shared_ptr<Loaded> loaded;
  std::vector<InputView> inputs;
  RunOptions options;
  Napi::Promise::Deferred deferred;
  std::vector<Result> outputs;
  std::optional<std::string> error;

  void Run() {
    try {
      // Process-wide JIT switches, set before each run as Triton's backend does.
      if (options.tensorFuser) torch::jit::setTensorExprFuserEnabled(*options.tensorFuser);
      if (options.jitExecutor) torch::jit::getExecutorMode() = *options.jitExecutor;
      if (options.jitProfiling) torch::jit::getProfilingMode() = *options.jitProfiling;
      torch::jit::GraphOptimizerEnabledGuard optimizer(options.optimizedExecution);
      std::optional<c10::InferenceMode> inference;
      std::optional<torch::NoGradGuard> noGrad;
      if (options.inferenceMode) inference.emplace(true);
      else noGrad.emplace();

      std::vector<c10::IValue> arguments;
      c10::Dict<std::string, at::Tensor> byName;
      for (const auto& input : inputs) {
        if (input.strings) {
          arguments.emplace_back(*input.strings);
          continue;
        }
        // A copy, so a model that writes into its inputs cannot change the caller's arrays.
        auto view = torch::from_blob(input.data, input.shape, torch::TensorOptions().dtype(input.scalar));
        at::Tensor tensor = loaded->device.is_cpu() ? view.clone() : view.to(loaded->device);
        if (options.dictInput) byName.insert(input.name, tensor);
        else arguments.emplace_back(std::move(tensor));
      }
      if (options.dictInput) arguments = {byName};
      Collect(loaded->module.forward(std::move(arguments)));
    } catch (const std::exception& failure) {
      error = Describe(failure);
    }
    // What the run left cached on the device goes back, after a failed run too (an
    // out-of-memory one most of all), as Triton does. The outputs are on the CPU by now.
    if (options.cacheCleaning && loaded->device.type() != c10::kCPU) {
      try {
        c10::getDeviceAllocator(loaded->device.type())->emptyCache();
      } catch (const std::exception& failure) {
        error = error.value_or(Describe(failure));
      }
    }
  }

  void Settle(Napi::Env env) {
    if (error) {
      deferred.Reject(Napi::Error::New(env, *error).Value());
      return;
    }
    Napi::Array result = Napi::Array::New(env, outputs.size());
    for (size_t i = 0; i < outputs.size(); i++) result.Set(static_cast<uint32_t>(i), ToJs(env, outputs[i]));
    deferred.Resolve(result);
  }

 private:
  // forward() may answer a tensor, a List[str], or a tuple or list of them (Triton's outputs in order).
  void Collect(const c10::IValue& value) {
    if (value.isTensor()) {
      outputs.push_back({value.toTensor().to(c10::kCPU).contiguous(), std::nullopt});
    } else if (value.isList() && value.toList().elementType()->kind() == c10::TypeKind::StringType) {
      std::vector<std::string> strings;
      for (const auto& element : value.toListRef()) strings.push_back(element.toStringRef());
      outputs.push_back({at::Tensor(), std::move(strings)});
    } else if (value.isTuple()) {
      for (const auto& element : value.toTupleRef().elements()) Collect(element);
    } else if (value.isTensorList()) {
      for (const at::Tensor& tensor : value.toTensorVector()) outputs.push_back({tensor.to(c10::kCPU).contiguous(), std::nullopt});
    } else if (value.isList()) {
      for (const auto& element : value.toListRef()) Collect(element);
    } else {
      throw std::runtime_error("forward() returned a " + value.tagKind() + ", not a tensor or a tuple or list of tensors");
    }
  }

  static Napi::Object ToJs(Napi::Env env, const Result& result) {
    Napi::Object output = Napi::Object::New(env);
    if (result.strings) {
      const auto& strings = *result.strings;
      Napi::Array data = Napi::Array::New(env, strings.size());
      for (size_t k = 0; k < strings.size(); k++) data.Set(static_cast<uint32_t>(k), Napi::Buffer<char>::Copy(env, strings[k].data(), strings[k].size()));
      output.Set("datatype", "BYTES");
      Napi::Array shape = Napi::Array::New(env, 1);
      shape.Set(0u, Napi::Number::New(env, static_cast<double>(strings.size())));
      output.Set("shape", shape);
      output.Set("data", data);
      return output;
    }
    const at::Tensor& tensor = result.tensor;
    output.Set("datatype", DataTypeOf(tensor.scalar_type()));
    Napi::Array shape = Napi::Array::New(env, tensor.dim());
    for (int64_t d = 0; d < tensor.dim(); d++) shape.Set(static_cast<uint32_t>(d), Napi::Number::New(env, static_cast<double>(tensor.size(d))));
    output.Set("shape", shape);
    size_t bytes = tensor.nbytes();
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, bytes);
    if (bytes > 0) std::memcpy(buffer.Data(), tensor.data_ptr(), bytes);
    output.Set("data", buffer);
    return output;
  }
};

// The JS face of a loaded module: argumentNames(), release().
class ScriptModule : public Napi::ObjectWrap<ScriptModule> {
 public:
  // The class of this environment (the main thread's, or a worker's): each loads the addon on its own.
  static Napi::Function Class(Napi::Env env) { return env.GetInstanceData<Napi::FunctionReference>()->Value(); }

  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ScriptModule",
                       {InstanceMethod("arguments", &ScriptModule::Arguments), InstanceMethod("release", &ScriptModule::Release)});
  }

  explicit ScriptModule(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ScriptModule>(info) {}

  void Attach(std::shared_ptr<Loaded> loaded) { loaded_ = std::move(loaded); }

  std::shared_ptr<Loaded> Require(Napi::Env env) {
    if (!loaded_) throw Napi::Error::New(env, "the module was released");
    return loaded_;
  }

 private:
  // forward()'s arguments after self: [{ name, type }], the type as Python annotates it (Tensor, List[str], Dict[str, Tensor]).
  Napi::Value Arguments(const Napi::CallbackInfo& info) {
    auto loaded = Require(info.Env());
    // A c10::Error escaping here would end the process: a module without forward() throws.
    std::optional<torch::jit::Method> forward = loaded->module.find_method("forward");
    if (!forward) throw Napi::Error::New(info.Env(), "the module has no forward() method");
    const auto& arguments = forward->function().getSchema().arguments();
    Napi::Array result = Napi::Array::New(info.Env());
    // The first argument is the module itself (self).
    for (size_t i = 1; i < arguments.size(); i++) {
      Napi::Object argument = Napi::Object::New(info.Env());
      argument.Set("name", arguments[i].name());
      argument.Set("type", arguments[i].type()->annotation_str());
      result.Set(static_cast<uint32_t>(i - 1), argument);
    }
    return result;
  }

  // Drops this handle's hold on the module; runs in flight keep it until they end.
  Napi::Value Release(const Napi::CallbackInfo& info) {
    loaded_.reset();
    return info.Env().Undefined();
  }

  std::shared_ptr<Loaded> loaded_;
};

// forward()'s inputs as the addon reads them: typed arrays in place, BYTES as List[str];
// their names only for a forward() that takes them by name.
std::vector<InputView> ReadInputs(Napi::Env env, Napi::Array list, bool named) {
  std::vector<InputView> inputs;
  inputs.reserve(list.Length());
  for (uint32_t i = 0; i < list.Length(); i++) {
    Napi::Object input = list.Get(i).As<Napi::Object>();
    std::string datatype = input.Get("datatype").As<Napi::String>().Utf8Value();
    std::string name = named ? input.Get("name").ToString().Utf8Value() : std::string();
    if (datatype == "BYTES") {
      Napi::Array elements = input.Get("data").As<Napi::Array>();
      c10::List<std::string> strings;
      strings.reserve(elements.Length());
      for (uint32_t k = 0; k < elements.Length(); k++) {
        Napi::Value element = elements.Get(k);
        if (element.IsString()) {
          strings.push_back(element.As<Napi::String>().Utf8Value());
        } else {
          Napi::Uint8Array bytes = element.As<Napi::Uint8Array>();
          strings.push_back(std::string(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength()));
        }
      }
      InputView view;
      view.name = std::move(name);
      view.strings = std::move(strings);
      inputs.push_back(std::move(view));
      continue;
    }
    auto scalar = ScalarTypeOf(datatype);
    if (!scalar) throw Napi::TypeError::New(env, "input " + std::to_string(i) + ": a datatype libtorch lacks");
    Napi::Value data = input.Get("data");
    if (!data.IsTypedArray()) throw Napi::TypeError::New(env, "input " + std::to_string(i) + ": data is not a typed array");
    Napi::TypedArray array = data.As<Napi::TypedArray>();
    Napi::Array dims = input.Get("shape").As<Napi::Array>();
    std::vector<int64_t> shape(dims.Length());
    int64_t count = 1;
    for (uint32_t d = 0; d < dims.Length(); d++) count *= shape[d] = dims.Get(d).As<Napi::Number>().Int64Value();
    if (static_cast<size_t>(count) * c10::elementSize(*scalar) != array.ByteLength()) {
      throw Napi::RangeError::New(env, "input " + std::to_string(i) + ": the data's byte length does not match its shape and datatype");
    }
    void* bytes = static_cast<uint8_t*>(array.ArrayBuffer().Data()) + array.ByteOffset();
    inputs.push_back({std::move(name), Napi::Persistent(data), bytes, std::move(shape), *scalar});
  }
  return inputs;
}

RunOptions ReadOptions(Napi::Object options) {
  RunOptions run;
  run.inferenceMode = options.Get("inferenceMode").ToBoolean();
  run.optimizedExecution = options.Get("optimizedExecution").ToBoolean();
  OptionalFlag(options, "tensorFuser", run.tensorFuser);
  OptionalFlag(options, "jitExecutor", run.jitExecutor);
  OptionalFlag(options, "jitProfiling", run.jitProfiling);
  run.cacheCleaning = options.Get("cacheCleaning").ToBoolean();
  run.dictInput = options.Get("dictInput").ToBoolean();
  return run;
}

// What the loop keeps of an instance thread: how many runs are out (the loop is held alive
// only while some are), the thread to join once it ends, and close()'s promise.
struct LoopSide;
void SettleOnLoop(Napi::Env env, Napi::Function, LoopSide* loop, ForwardJob* job);
using SettleFunction = Napi::TypedThreadSafeFunction<LoopSide, ForwardJob, SettleOnLoop>;

struct Queue {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<ForwardJob*> jobs;
  bool closing = false;
};

struct LoopSide {
  std::shared_ptr<Queue> queue;
  SettleFunction settle;
  size_t pending = 0;
  std::thread thread;
  std::optional<Napi::Promise::Deferred> closed;
};

void SettleOnLoop(Napi::Env env, Napi::Function, LoopSide* loop, ForwardJob* job) {
  // No env: the environment is being torn down, and a job's references cannot be dropped.
  if (env == nullptr) return;
  job->Settle(env);
  delete job;
  if (--loop->pending == 0 && !loop->closed) loop->settle.Unref(env);
}

// Runs on the loop once the thread has released the settle function, its last act.
void JoinOnLoop(Napi::Env, void*, LoopSide* loop) {
  {
    // At environment teardown the thread may still be waiting for work: it ends now.
    std::lock_guard<std::mutex> lock(loop->queue->mutex);
    loop->queue->closing = true;
    loop->queue->jobs.clear();
  }
  loop->queue->wake.notify_one();
  loop->thread.join();
  try {
    if (loop->closed) loop->closed->Resolve(loop->closed->Env().Undefined());
  } catch (const Napi::Error&) {
    // Teardown: no JS left to tell.
  }
  delete loop;
}

// An instance's own thread, as each Triton model instance has: its runs happen one at a
// time, always on the same thread. On libuv's shared pool they were spread over its
// threads, each with an OpenMP team of its own competing for the cores, and a batch of 64
// took twice as long as in Python.
class InstanceThread : public Napi::ObjectWrap<InstanceThread> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "InstanceThread",
                       {InstanceMethod("forward", &InstanceThread::Forward), InstanceMethod("forwardHere", &InstanceThread::ForwardHere),
                        InstanceMethod("close", &InstanceThread::Close)});
  }

  // new InstanceThread(module, options): the module and run options are the instance's for its life.
  explicit InstanceThread(const Napi::CallbackInfo& info) : Napi::ObjectWrap<InstanceThread>(info), queue_(std::make_shared<Queue>()), loop_(new LoopSide()) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(ScriptModule::Class(env)) || !info[1].IsObject()) {
      throw Napi::TypeError::New(env, "new InstanceThread(module, options)");
    }
    loaded_ = ScriptModule::Unwrap(info[0].As<Napi::Object>())->Require(env);
    options_ = ReadOptions(info[1].As<Napi::Object>());
    loop_->queue = queue_;
    loop_->settle = SettleFunction::New(env, "tritium-torch-instance", 0, 1, loop_, JoinOnLoop);
    loop_->settle.Unref(env);
    loop_->thread = std::thread(Work, queue_, loop_->settle);
  }

  ~InstanceThread() override { Stop(); }

 private:
  // The thread: runs jobs in order until closed and drained, handing each back to the loop.
  static void Work(std::shared_ptr<Queue> queue, SettleFunction settle) {
    for (;;) {
      ForwardJob* job;
      {
        std::unique_lock<std::mutex> lock(queue->mutex);
        queue->wake.wait(lock, [&] { return queue->closing || !queue->jobs.empty(); });
        if (queue->jobs.empty()) break;
        job = queue->jobs.front();
        queue->jobs.pop_front();
      }
      job->Run();
      // Closing: the environment is being torn down, and the settle function must not be used again.
      if (settle.BlockingCall(job) != napi_ok) return;
    }
    settle.Release();
  }

  // forward(inputs): a promise of the module's forward() tensors, run on this thread.
  Napi::Value Forward(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "forward(inputs)");
    if (stopped_) throw Napi::Error::New(env, "the instance thread was closed");
    auto* job = new ForwardJob{loaded_, ReadInputs(env, info[0].As<Napi::Array>(), options_.dictInput), options_, Napi::Promise::Deferred::New(env), {}, std::nullopt};
    Napi::Promise promise = job->deferred.Promise();
    if (loop_->pending++ == 0) loop_->settle.Ref(env);
    {
      std::lock_guard<std::mutex> lock(queue_->mutex);
      queue_->jobs.push_back(job);
    }
    queue_->wake.notify_one();
    return promise;
  }

  // forwardHere(inputs): forward() run now, on the calling thread (the event loop's), for a
  // model whose runs are too short to pay for waking the instance thread and the loop: a
  // promise settled before this returns.
  Napi::Value ForwardHere(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "forwardHere(inputs)");
    if (stopped_) throw Napi::Error::New(env, "the instance thread was closed");
    ForwardJob job{loaded_, ReadInputs(env, info[0].As<Napi::Array>(), options_.dictInput), options_, Napi::Promise::Deferred::New(env), {}, std::nullopt};
    job.Run();
    job.Settle(env);
    return job.deferred.Promise();
  }

  // close(): a promise that settles once the runs already queued are done and the thread has ended.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto closed = Napi::Promise::Deferred::New(env);
    if (stopped_) {
      closed.Resolve(env.Undefined());
      return closed.Promise();
    }
    loop_->closed = closed;
    loop_->settle.Ref(env);
    Stop();
    return closed.Promise();
  }

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    // Runs already queued hold the module themselves.
    loaded_.reset();
    {
      std::lock_guard<std::mutex> lock(queue_->mutex);
      queue_->closing = true;
    }
    queue_->wake.notify_one();
  }

  std::shared_ptr<Loaded> loaded_;
  RunOptions options_;
  std::shared_ptr<Queue> queue_;
  LoopSide* loop_;  // owned by the settle function: deleted when it is finalized, after close() or at the environment's teardown
  bool stopped_ = false;
};

void LoadWorker::OnOK() {
  Napi::Object handle = ScriptModule::Class(Env()).New({});
  ScriptModule::Unwrap(handle)->Attach(std::move(loaded_));
  deferred_.Resolve(handle);
}

// load(path, device): a promise of the module, loaded off the event loop.
Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) throw Napi::TypeError::New(env, "load(path, device)");
  std::optional<c10::Device> device;
  try {
    device.emplace(info[1].As<Napi::String>().Utf8Value());
  } catch (const std::exception& error) {
    throw Napi::Error::New(env, Describe(error));
  }
  auto* worker = new LoadWorker(env, info[0].As<Napi::String>().Utf8Value(), *device);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

// setThreads(intra, inter): each 0 to leave libtorch's choice. libtorch takes the
// inter-op count only before its pool starts; the error says so.
Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int intra = info[0].As<Napi::Number>().Int32Value();
  int inter = info[1].As<Napi::Number>().Int32Value();
  try {
    if (intra > 0) at::set_num_threads(intra);
    if (inter > 0) at::set_num_interop_threads(inter);
  } catch (const std::exception& error) {
    throw Napi::Error::New(env, Describe(error));
  }
  return env.Undefined();
}

Napi::Value DisableCudnn(const Napi::CallbackInfo& info) {
  at::globalContext().setUserEnabledCuDNN(!info[0].ToBoolean().Value());
  return info.Env().Undefined();
}

Napi::Value CudaDeviceCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), torch::cuda::is_available() ? static_cast<double>(torch::cuda::device_count()) : 0);
}

Napi::Value Threads(const Napi::CallbackInfo& info) {
  Napi::Object result = Napi::Object::New(info.Env());
  result.Set("intra", at::get_num_threads());
  result.Set("inter", at::get_num_interop_threads());
  return result;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Napi::Function moduleClass = ScriptModule::Define(env);
  env.SetInstanceData(new Napi::FunctionReference(Napi::Persistent(moduleClass)));
  exports.Set("load", Napi::Function::New(env, Load));
  exports.Set("InstanceThread", InstanceThread::Define(env));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads));
  exports.Set("threads", Napi::Function::New(env, Threads));
  exports.Set("disableCudnn", Napi::Function::New(env, DisableCudnn));
  exports.Set("cudaDeviceCount", Napi::Function::New(env, CudaDeviceCount));
  exports.Set("torchVersion", Napi::String::New(env, TORCH_VERSION));
  return exports;
}

}  // namespace

NODE_API_MODULE(torchscript, Init)
