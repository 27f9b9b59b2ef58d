// Two jobs node:fs cannot do: reserve a file's pages, and map an open file descriptor
// read/write and shared, handed to JavaScript as an ArrayBuffer that unmaps itself when V8
// collects it. Files are created, sized, closed and unlinked from TypeScript (node:fs); a
// mapping outlives its descriptor.
#include <napi.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

namespace {

std::string ErrnoText(const char* call, int error) {
  return std::string(call) + " failed: " + std::strerror(error) + " (errno " + std::to_string(error) + ")";
}

struct FileRange {
  int fd;
  size_t length;
};

// Both functions take (fd, byteLength): checked once here, named in errors as `call`.
FileRange FileRangeArguments(const Napi::CallbackInfo& info, const std::string& call) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, call + "(fd, byteLength) takes two numbers");
  }
  const double fdNumber = info[0].As<Napi::Number>().DoubleValue();
  const double lengthNumber = info[1].As<Napi::Number>().DoubleValue();
  if (!(fdNumber >= 0 && fdNumber <= 2147483647 && std::floor(fdNumber) == fdNumber)) {
    throw Napi::RangeError::New(env, call + ": fd must be a non-negative integer");
  }
  if (!(lengthNumber >= 1 && lengthNumber <= 9007199254740991.0 && std::floor(lengthNumber) == lengthNumber)) {
    throw Napi::RangeError::New(env, call + ": byteLength must be a positive integer");
  }
  return {static_cast<int>(fdNumber), static_cast<size_t>(lengthNumber)};
}

// A sized file on tmpfs has no pages yet: when /dev/shm is full, the first write to a page
// kills the process with SIGBUS. Reserving them up front turns that into ENOSPC here.
Napi::Value Reserve(const Napi::CallbackInfo& info) {
  const FileRange range = FileRangeArguments(info, "reserve");
  const int error = posix_fallocate(range.fd, 0, static_cast<off_t>(range.length));
  if (error != 0) throw Napi::Error::New(info.Env(), "reserve: " + ErrnoText("posix_fallocate", error));
  return info.Env().Undefined();
}

Napi::Value Map(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [fd, length] = FileRangeArguments(info, "map");

  // Touching a page past the end of the file raises SIGBUS and kills the process: refuse
  // here instead of trusting the caller's size.
  struct stat st;
  if (fstat(fd, &st) != 0) throw Napi::Error::New(env, "map: " + ErrnoText("fstat", errno));
  if (static_cast<unsigned long long>(st.st_size) < length) {
    throw Napi::RangeError::New(env, "map: the file holds " + std::to_string(st.st_size) + " bytes, fewer than the " +
                                         std::to_string(length) + " asked for");
  }

  void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) throw Napi::Error::New(env, "map: " + ErrnoText("mmap", errno));

  // V8 counts an ArrayBuffer's byte length as external memory itself (the same
  // AdjustAmountOfExternalAllocatedMemory that napi_adjust_external_memory calls), so the
  // mapping weighs on GC without a second report here, which would count it twice.
  return Napi::ArrayBuffer::New(env, data, length, [](Napi::Env, void* mapped, size_t* size) {
    munmap(mapped, *size);
    delete size;
  }, new size_t(length));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("map", Napi::Function::New(env, Map, "map"));
  exports.Set("reserve", Napi::Function::New(env, Reserve, "reserve"));
  return exports;
}

}  // namespace

NODE_API_MODULE(shared_memory, Init)
