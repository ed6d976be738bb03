// The normal build's regression test of a fuzz target: runs its
// LLVMFuzzerTestOneInput, compiled with the project's compiler and without
// libFuzzer, on every file of the given corpus directories (the checked-in
// seeds, and every input that once crashed it). A crash fails the test.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "util/files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "no inputs: give corpus directories or files\n");
    return 2;
  }
  for (const std::string& file : files) {
    primus::Result<std::string> content = primus::ReadFile(file);
    if (!content.ok()) {
      std::fprintf(stderr, "%s\n", content.error().message.c_str());
      return 2;
    }
    std::fprintf(stderr, "%s\n", file.c_str());  // the last one named is the culprit of a crash
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(content->data()), content->size());
  }
  std::printf("%zu inputs ran without a crash\n", files.size());
  return 0;
}
