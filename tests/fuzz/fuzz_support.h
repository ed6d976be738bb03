// Shared by the fuzz targets: a scratch directory for inputs that must be
// files, and a splitter for inputs made of several parts.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace primus::fuzz {

// One directory per process, made on first use, kept for the next input and
// removed at exit.
inline const std::string& ScratchDir() {
  struct Scratch {
    Scratch() {
      std::string pattern = "/tmp/primus-fuzz-XXXXXX";
      if (mkdtemp(pattern.data()) != nullptr) path = pattern;
    }
    ~Scratch() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove_all(path, ignored);
    }
    std::string path;
  };
  static const Scratch scratch;
  return scratch.path;
}

// Writes a scratch file as is: no fsync, no rename (thousands of inputs a second).
inline bool WriteScratchFile(const std::string& path, std::string_view content) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  return std::fclose(file) == 0 && written;
}

// Splits at every `separator` line ("\n<separator>\n"), so that one input
// can hold several files or several command lines.
inline std::vector<std::string_view> SplitParts(std::string_view input, std::string_view separator) {
  std::vector<std::string_view> parts;
  std::string marker = "\n" + std::string(separator) + "\n";
  size_t start = 0;
  for (size_t at; (at = input.find(marker, start)) != std::string_view::npos; start = at + marker.size()) {
    parts.push_back(input.substr(start, at - start));
  }
  parts.push_back(input.substr(start));
  return parts;
}

}  // namespace primus::fuzz
