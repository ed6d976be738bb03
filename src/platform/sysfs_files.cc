#include "platform/sysfs_files.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::platform {

void Diagnostics::Warn(std::string message) {
  log::Warn("{}", message);
  warnings_.push_back(std::move(message));
}

std::optional<std::string> ReadAttribute(const std::string& path) {
  auto content = ReadFile(path);
  if (!content.ok()) return std::nullopt;
  return std::string(Trim(*content));
}

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool digit_a = std::isdigit(static_cast<unsigned char>(a[i]));
    bool digit_b = std::isdigit(static_cast<unsigned char>(b[j]));
    if (digit_a && digit_b) {
      size_t end_a = i, end_b = j;
      while (end_a < a.size() && std::isdigit(static_cast<unsigned char>(a[end_a]))) ++end_a;
      while (end_b < b.size() && std::isdigit(static_cast<unsigned char>(b[end_b]))) ++end_b;
      // Compare the digit runs as numbers: by length once leading zeros are gone, then by text.
      std::string_view run_a(a.data() + i, end_a - i), run_b(b.data() + j, end_b - j);
      while (run_a.size() > 1 && run_a.front() == '0') run_a.remove_prefix(1);
      while (run_b.size() > 1 && run_b.front() == '0') run_b.remove_prefix(1);
      if (run_a.size() != run_b.size()) return run_a.size() < run_b.size();
      if (run_a != run_b) return run_a < run_b;
      i = end_a;
      j = end_b;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

int64_t ReadIntegerAttribute(const std::string& path, int64_t fallback) {
  auto text = ReadAttribute(path);
  return text ? ParseInt(*text).value_or(fallback) : fallback;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end(), NaturalLess);
  return names;
}

std::string LinkTargetName(const std::string& path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) return "";
  std::string target = resolved;
  size_t slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

std::optional<uint64_t> ParseUnsigned(std::string_view text, int base) {
  text = Trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<KeyValueLine> ParseKeyValueLines(std::string_view text, char separator,
                                             std::vector<int>* malformed) {
  std::vector<KeyValueLine> lines;
  int number = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++number;
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    size_t at = separator == ' ' ? line.find_first_of(" \t") : line.find(separator);
    if (at == std::string_view::npos || at == 0) {
      if (malformed) malformed->push_back(number);
      continue;
    }
    lines.push_back({std::string(Trim(line.substr(0, at))), std::string(Trim(line.substr(at + 1)))});
  }
  return lines;
}

std::optional<std::string> FindValue(const std::vector<KeyValueLine>& lines, std::string_view key) {
  for (const KeyValueLine& line : lines) {
    if (line.key == key) return line.value;
  }
  return std::nullopt;
}

std::optional<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  text = Trim(text);
  if (text.empty()) return cpus;  // a memory-only NUMA node has no CPUs
  for (const std::string& part : Split(text, ',')) {
    std::vector<std::string> bounds = Split(part, '-');
    if (bounds.size() > 2) return std::nullopt;
    auto first = ParseUnsigned(bounds[0]);
    auto last = bounds.size() == 2 ? ParseUnsigned(bounds[1]) : first;
    if (!first || !last || *last < *first || *last > 1u << 20) return std::nullopt;
    for (uint64_t cpu = *first; cpu <= *last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::vector<std::string> ranges;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    ranges.push_back(j == i ? std::to_string(cpus[i])
                            : std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]));
    i = j + 1;
  }
  return Join(ranges, ",");
}

}  // namespace primus::platform
