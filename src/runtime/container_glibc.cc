#include "runtime/container_glibc.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <re2/re2.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// Reads `size` bytes at `offset`: only the headers and the version
// sections are read, not the whole (large) binary.
bool ReadBytes(int fd, uint64_t offset, size_t size, void* out) {
  char* target = static_cast<char*>(out);
  while (size > 0) {
    ssize_t n = pread(fd, target, size, static_cast<off_t>(offset));
    if (n <= 0) return false;
    target += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return true;
}

template <typename T>
bool ReadAt(const std::string& data, uint64_t offset, T* out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(out, data.data() + offset, sizeof(T));
  return true;
}

std::string StringAt(const std::string& table, uint64_t index) {
  if (index >= table.size()) return "";
  return std::string(table.data() + index, strnlen(table.data() + index, table.size() - index));
}

// The last line of `output` that contains `needle`.
std::string LineWith(const std::string& output, const std::string& needle) {
  std::string found;
  for (const std::string& line : Split(output, '\n')) {
    if (line.find(needle) != std::string::npos) found = std::string(Trim(line));
  }
  return found;
}

}  // namespace

int CompareVersions(const std::string& a, const std::string& b) {
  std::vector<std::string> left = Split(a, '.'), right = Split(b, '.');
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    int64_t x = i < left.size() ? ParseInt(left[i]).value_or(0) : 0;
    int64_t y = i < right.size() ? ParseInt(right[i]).value_or(0) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

Result<std::string> RequiredGlibc(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return UnavailableError("cannot read " + path + ": " + std::strerror(errno));
  Elf64_Ehdr header;
  bool elf = ReadBytes(fd, 0, sizeof(header), &header) && std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
             header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_shentsize == sizeof(Elf64_Shdr);
  std::vector<Elf64_Shdr> sections(elf ? header.e_shnum : 0);
  if (elf && !ReadBytes(fd, header.e_shoff, sections.size() * sizeof(Elf64_Shdr), sections.data())) elf = false;
  // The version-needed section and its string table.
  std::string needs, strings;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_GNU_verneed || section.sh_link >= sections.size()) continue;
    const Elf64_Shdr& table = sections[section.sh_link];
    needs.resize(section.sh_size);
    strings.resize(table.sh_size);
    if (!ReadBytes(fd, section.sh_offset, needs.size(), needs.data()) ||
        !ReadBytes(fd, table.sh_offset, strings.size(), strings.data())) {
      needs.clear();
    }
    break;
  }
  close(fd);
  if (!elf) return UnavailableError(path + " is not a 64-bit ELF file");
  std::string highest;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_GNU_verneed) continue;
    uint64_t need_offset = 0;
    for (uint64_t n = 0; n < section.sh_info; ++n) {
      Elf64_Verneed need;
      if (!ReadAt(needs, need_offset, &need)) break;
      uint64_t aux_offset = need_offset + need.vn_aux;
      for (uint64_t a = 0; a < need.vn_cnt; ++a) {
        Elf64_Vernaux aux;
        if (!ReadAt(needs, aux_offset, &aux)) break;
        std::string name = StringAt(strings, aux.vna_name);
        if (name.starts_with("GLIBC_") && name != "GLIBC_PRIVATE") {
          std::string version = name.substr(6);
          if (highest.empty() || CompareVersions(version, highest) > 0) highest = version;
        }
        if (aux.vna_next == 0) break;
        aux_offset += aux.vna_next;
      }
      if (need.vn_next == 0) break;
      need_offset += need.vn_next;
    }
  }
  if (highest.empty()) return UnavailableError(path + " names no GLIBC_ version (not a glibc program?)");
  return highest;
}

std::optional<Error> ExplainLoaderFailure(const std::string& output, const std::string& image,
                                          const std::string& binary, const std::string& required) {
  std::string needs = required.empty() ? "" : " (it needs glibc " + required + " or newer)";
  std::string hint = "use an image based on a newer distribution" +
                     (required.empty() ? std::string() : " (glibc " + required + " or newer)") +
                     ", or install primus-cli in the image and run `primus-cli direct` there";
  static const RE2 missing_version("version `(GLIBC_[0-9.]+)' not found");
  std::string version;
  if (RE2::PartialMatch(output, missing_version, &version)) {
    return Error{ExitCode::kUnavailable,
                 "the C library in image " + image + " is too old for primus-cli" + needs + ": its loader says " +
                     LineWith(output, version),
                 hint};
  }
  // A glibc library missing: the loader names it.
  static const RE2 missing_library("error while loading shared libraries: ([^:]+): cannot open shared object");
  std::string library;
  if (output.find(binary) != std::string::npos && RE2::PartialMatch(output, missing_library, &library)) {
    return Error{ExitCode::kUnavailable,
                 "image " + image + " has no " + library + ", part of the glibc that primus-cli needs" + needs, hint};
  }
  // No loader (/lib64/ld-linux-x86-64.so.2) at all: the engine reports the
  // binary itself as not found.
  bool names_binary = output.find(binary) != std::string::npos;
  bool missing = output.find("no such file or directory") != std::string::npos ||
                 output.find("No such file or directory") != std::string::npos;
  if (names_binary && missing) {
    return Error{ExitCode::kUnavailable,
                 "image " + image + " cannot run primus-cli: it has no glibc loader" + needs +
                     " (a musl image such as Alpine?): " + LineWith(output, binary),
                 hint};
  }
  return std::nullopt;
}

}  // namespace primus::runtime
