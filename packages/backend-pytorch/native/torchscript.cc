// The TorchScript addon of @tritium/backend-pytorch: loads a module with torch::jit::load
// and runs its forward() on libuv's worker threads (Napi::AsyncWorker), so the event loop
// never waits on libtorch. Inputs are read in place from the callers' typed arrays;
// outputs are copied into new ArrayBuffers on the loop.
#include <napi.h>

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
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

class ForwardWorker : public Napi::AsyncWorker {
 public:
  ForwardWorker(Napi::Env env, std::shared_ptr<Loaded> loaded, std::vector<InputView> inputs, RunOptions options)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        loaded_(std::move(loaded)),
        inputs_(std::move(inputs)),
        options_(options) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      // Process-wide JIT switches, set before each run as Triton's backend does.
      if (options_.tensorFuser) torch::jit::setTensorExprFuserEnabled(*options_.tensorFuser);
      if (options_.jitExecutor) torch::jit::getExecutorMode() = *options_.jitExecutor;
      if (options_.jitProfiling) torch::jit::getProfilingMode() = *options_.jitProfiling;
      torch::jit::GraphOptimizerEnabledGuard optimizer(options_.optimizedExecution);
      std::optional<c10::InferenceMode> inference;
      std::optional<torch::NoGradGuard> noGrad;
      if (options_.inferenceMode) inference.emplace(true);
      else noGrad.emplace();

      std::vector<c10::IValue> arguments;
      arguments.reserve(inputs_.size());
      for (const auto& input : inputs_) {
        if (input.strings) {
          arguments.emplace_back(*input.strings);
          continue;
        }
        auto tensor = torch::from_blob(input.data, input.shape, torch::TensorOptions().dtype(input.scalar));
        arguments.emplace_back(tensor.to(loaded_->device).contiguous());
      }
      Collect(loaded_->module.forward(std::move(arguments)));
    } catch (const std::exception& error) {
      SetError(Describe(error));
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Array result = Napi::Array::New(env, outputs_.size());
    for (size_t i = 0; i < outputs_.size(); i++) {
      Napi::Object output = Napi::Object::New(env);
      result.Set(static_cast<uint32_t>(i), output);
      if (outputs_[i].strings) {
        const auto& strings = *outputs_[i].strings;
        Napi::Array data = Napi::Array::New(env, strings.size());
        for (size_t k = 0; k < strings.size(); k++) data.Set(static_cast<uint32_t>(k), Napi::Buffer<char>::Copy(env, strings[k].data(), strings[k].size()));
        output.Set("datatype", "BYTES");
        Napi::Array shape = Napi::Array::New(env, 1);
        shape.Set(0u, Napi::Number::New(env, static_cast<double>(strings.size())));
        output.Set("shape", shape);
        output.Set("data", data);
        continue;
      }
      const at::Tensor& tensor = outputs_[i].tensor;
      output.Set("datatype", DataTypeOf(tensor.scalar_type()));
      Napi::Array shape = Napi::Array::New(env, tensor.dim());
      for (int64_t d = 0; d < tensor.dim(); d++) shape.Set(static_cast<uint32_t>(d), Napi::Number::New(env, static_cast<double>(tensor.size(d))));
      output.Set("shape", shape);
      size_t bytes = tensor.nbytes();
      Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, bytes);
      if (bytes > 0) std::memcpy(buffer.Data(), tensor.data_ptr(), bytes);
      output.Set("data", buffer);
    }
    outputs_.clear();
    inputs_.clear();
    deferred_.Resolve(result);
  }

  void OnError(const Napi::Error& error) override {
    inputs_.clear();
    deferred_.Reject(error.Value());
  }

 private:
  // forward() may answer a tensor, a List[str], or a tuple or list of them (Triton's outputs in order).
  void Collect(const c10::IValue& value) {
    if (value.isTensor()) {
      outputs_.push_back({value.toTensor().to(c10::kCPU).contiguous(), std::nullopt});
    } else if (value.isList() && value.toList().elementType()->kind() == c10::TypeKind::StringType) {
      std::vector<std::string> strings;
      for (const auto& element : value.toListRef()) strings.push_back(element.toStringRef());
      outputs_.push_back({at::Tensor(), std::move(strings)});
    } else if (value.isTuple()) {
      for (const auto& element : value.toTupleRef().elements()) Collect(element);
    } else if (value.isTensorList()) {
      for (const at::Tensor& tensor : value.toTensorVector()) outputs_.push_back({tensor.to(c10::kCPU).contiguous(), std::nullopt});
    } else if (value.isList()) {
      for (const auto& element : value.toListRef()) Collect(element);
    } else {
      throw std::runtime_error("forward() returned a " + value.tagKind() + ", not a tensor or a tuple or list of tensors");
    }
  }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Loaded> loaded_;
  std::vector<InputView> inputs_;
  RunOptions options_;
  std::vector<Result> outputs_;
};

// The JS face of a loaded module: argumentNames, forward(inputs, options), release().
class ScriptModule : public Napi::ObjectWrap<ScriptModule> {
 public:
  static Napi::FunctionReference* constructor;

  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ScriptModule",
                       {InstanceMethod("argumentNames", &ScriptModule::ArgumentNames), InstanceMethod("forward", &ScriptModule::Forward),
                        InstanceMethod("release", &ScriptModule::Release)});
  }

  explicit ScriptModule(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ScriptModule>(info) {}

  void Attach(std::shared_ptr<Loaded> loaded) { loaded_ = std::move(loaded); }

 private:
  std::shared_ptr<Loaded> Require(Napi::Env env) {
    if (!loaded_) throw Napi::Error::New(env, "the module was released");
    return loaded_;
  }

  Napi::Value ArgumentNames(const Napi::CallbackInfo& info) {
    auto loaded = Require(info.Env());
    const auto& arguments = loaded->module.get_method("forward").function().getSchema().arguments();
    Napi::Array names = Napi::Array::New(info.Env());
    // The first argument is the module itself (self).
    for (size_t i = 1; i < arguments.size(); i++) names.Set(static_cast<uint32_t>(i - 1), arguments[i].name());
    return names;
  }

  Napi::Value Forward(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto loaded = Require(env);
    if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsObject()) throw Napi::TypeError::New(env, "forward(inputs, options)");
    Napi::Array list = info[0].As<Napi::Array>();
    std::vector<InputView> inputs;
    inputs.reserve(list.Length());
    for (uint32_t i = 0; i < list.Length(); i++) {
      Napi::Object input = list.Get(i).As<Napi::Object>();
      if (input.Get("datatype").As<Napi::String>().Utf8Value() == "BYTES") {
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
        view.strings = std::move(strings);
        inputs.push_back(std::move(view));
        continue;
      }
      auto scalar = ScalarTypeOf(input.Get("datatype").As<Napi::String>().Utf8Value());
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
      inputs.push_back({Napi::Persistent(data), bytes, std::move(shape), *scalar});
    }
    Napi::Object options = info[1].As<Napi::Object>();
    RunOptions run;
    run.inferenceMode = options.Get("inferenceMode").ToBoolean();
    run.optimizedExecution = options.Get("optimizedExecution").ToBoolean();
    OptionalFlag(options, "tensorFuser", run.tensorFuser);
    OptionalFlag(options, "jitExecutor", run.jitExecutor);
    OptionalFlag(options, "jitProfiling", run.jitProfiling);
    auto* worker = new ForwardWorker(env, loaded, std::move(inputs), run);
    Napi::Promise promise = worker->Promise();
    worker->Queue();
    return promise;
  }

  // Drops this handle's hold on the module; runs in flight keep it until they end.
  Napi::Value Release(const Napi::CallbackInfo& info) {
    loaded_.reset();
    return info.Env().Undefined();
  }

  std::shared_ptr<Loaded> loaded_;
};

Napi::FunctionReference* ScriptModule::constructor = nullptr;

void LoadWorker::OnOK() {
  Napi::Object handle = ScriptModule::constructor->New({});
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
  ScriptModule::constructor = new Napi::FunctionReference(Napi::Persistent(moduleClass));
  exports.Set("load", Napi::Function::New(env, Load));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads));
  exports.Set("threads", Napi::Function::New(env, Threads));
  exports.Set("disableCudnn", Napi::Function::New(env, DisableCudnn));
  exports.Set("cudaDeviceCount", Napi::Function::New(env, CudaDeviceCount));
  exports.Set("torchVersion", Napi::String::New(env, TORCH_VERSION));
  return exports;
}

}  // namespace

NODE_API_MODULE(torchscript, Init)
