// A shared library opened at run time (dlopen), for the vendor libraries the
// benchmarks and preflight need: OpenBLAS, the CUDA/HIP runtimes, cuBLASLt/hipBLASLt and
// NCCL/RCCL. primus-cli links none of them, so it loads on any host; a
// missing library is an error naming what was tried and how to get it, and
// a missing symbol names the library file it was looked up in.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus {

class DynamicLibrary {
 public:
  // Tries `names` in order (sonames resolved by the loader: LD_LIBRARY_PATH,
  // the ld.so cache, RUNPATH; or absolute paths). `what` names the library
  // for messages ("cuBLASLt"); `hint` says how to install it.
  static Result<DynamicLibrary> Open(const std::vector<std::string>& names, const std::string& what,
                                     const std::string& hint);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  // The symbol, or nullptr when the library lacks it (optional entry points).
  void* Find(const char* name) const;
  // The symbol, or an UnavailableError naming it and the library file.
  Result<void*> Require(const char* name) const;

  template <typename Function>
  Status Load(const char* name, Function* out) const {
    auto symbol = Require(name);
    if (!symbol.ok()) return symbol.error();
    *out = reinterpret_cast<Function>(*symbol);
    return Status::Ok();
  }

  const std::string& what() const { return what_; }
  // The file the loader chose (from the link map), e.g. /usr/lib/.../libopenblas.so.0.
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, std::string what, std::string path);
  void* handle_ = nullptr;
  std::string what_;
  std::string path_;
};

// Whether the file at `path` contains `text` (a plain byte search): how a
// VCCL build of libnccl.so is told apart (`strings libnccl.so | grep VCCL`).
bool FileContains(const std::string& path, const std::string& text);

}  // namespace primus
