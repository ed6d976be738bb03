// Reading the small text files the kernel exports under /sys and /proc, and
// keeping the warnings detection raises on the way. A missing, unreadable or
// malformed file is never fatal: readers return "no value" and the caller
// records a warning (once, naming the file) and carries on with the best
// answer it has, so `info` on a half-broken node still says what it can.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus::platform {

// Warnings raised while detecting; each one is also written to the log.
class Diagnostics {
 public:
  void Warn(std::string message);
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::string> warnings_;
};

// The file's contents with surrounding whitespace removed; nullopt when it
// cannot be read (absent, a directory, permission denied by a device cgroup).
std::optional<std::string> ReadAttribute(const std::string& path);

// Names in a directory (no "." or ".."), in natural order (mlx5_2 before
// mlx5_10, node 9 before node 10). Empty when the directory cannot be read.
std::vector<std::string> ListDirectory(const std::string& path);

// Orders names with embedded numbers by those numbers: "eth2" < "eth10".
bool NaturalLess(const std::string& a, const std::string& b);

// A signed decimal attribute (numa_node is -1 on one-node machines), or
// `fallback` when the file cannot be read or holds something else.
int64_t ReadIntegerAttribute(const std::string& path, int64_t fallback);

// The last component of the path a symbolic link resolves to ("" if none):
// sysfs names a device's driver and PCI address this way.
std::string LinkTargetName(const std::string& path);

// Unsigned numbers as sysfs prints them: decimal, or hexadecimal with "0x"
// (or without it when base is 16). nullopt for anything else.
std::optional<uint64_t> ParseUnsigned(std::string_view text, int base = 10);

// "name value" lines (KFD topology) or "name: value" lines (procfs); a line
// without a separator is reported in `malformed` (1-based line numbers).
struct KeyValueLine {
  std::string key;
  std::string value;
};
std::vector<KeyValueLine> ParseKeyValueLines(std::string_view text, char separator,
                                             std::vector<int>* malformed = nullptr);
// The value for `key`, or nullopt.
std::optional<std::string> FindValue(const std::vector<KeyValueLine>& lines, std::string_view key);

// A Linux CPU list ("0-3,8,10-11") as numbers; nullopt when malformed.
std::optional<std::vector<int>> ParseCpuList(std::string_view text);
// The reverse: consecutive runs folded into ranges.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace primus::platform
