#include "util/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "util/strings.h"

namespace primus {

Result<DynamicLibrary> DynamicLibrary::Open(const std::vector<std::string>& names, const std::string& what,
                                            const std::string& hint) {
  std::vector<std::string> failures;
  for (const std::string& name : names) {
    ::dlerror();
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = ::dlerror();
      failures.push_back(reason ? reason : name + ": unknown dlopen error");
      continue;
    }
    std::string path = name;
    link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name && *map->l_name) {
      path = map->l_name;
    }
    return DynamicLibrary(handle, what, path);
  }
  return UnavailableError("cannot load " + what + " (tried " + Join(names, ", ") + "): " + Join(failures, "; "), hint);
}

DynamicLibrary::DynamicLibrary(void* handle, std::string what, std::string path)
    : handle_(handle), what_(std::move(what)), path_(std::move(path)) {}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), what_(std::move(other.what_)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    handle_ = std::exchange(other.handle_, nullptr);
    what_ = std::move(other.what_);
    path_ = std::move(other.path_);
  }
  return *this;
}

// Vendor libraries start threads and register atexit handlers (NCCL, the
// CUDA runtime): unloading them before exit is a known source of crashes,
// so the handle is kept for the life of the process.
DynamicLibrary::~DynamicLibrary() = default;

void* DynamicLibrary::Find(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

Result<void*> DynamicLibrary::Require(const char* name) const {
  void* symbol = Find(name);
  if (symbol == nullptr) {
    return UnavailableError(what_ + " (" + path_ + ") has no symbol " + name,
                            "the library is too old or not the expected one; check LD_LIBRARY_PATH");
  }
  return symbol;
}

bool FileContains(const std::string& path, const std::string& text) {
  if (text.empty()) return true;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::string window;
  std::vector<char> chunk(1 << 20);
  bool found = false;
  while (!found) {
    size_t read = std::fread(chunk.data(), 1, chunk.size(), file);
    if (read == 0) break;
    // Keep the last text.size()-1 bytes so a match across chunks is found.
    window.append(chunk.data(), read);
    found = window.find(text) != std::string::npos;
    if (window.size() >= text.size()) window.erase(0, window.size() - (text.size() - 1));
  }
  std::fclose(file);
  return found;
}

}  // namespace primus
