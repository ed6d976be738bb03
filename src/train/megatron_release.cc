#include "train/megatron_release.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "hooks/hook_runner.h"
#include "io/subprocess.h"
#include "train/builtin_tables.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Value;

constexpr const char* kArgumentsPy = "megatron/training/arguments.py";
constexpr const char* kPackageInfoPy = "megatron/core/package_info.py";
constexpr size_t kMaxTableBytes = 4 << 20;  // a checkout's table: 800 rows today

// The compiled tables' releases (from each text's first line, "# Megatron-LM
// <release> <commit>"), oldest first; a table is parsed when first asked for
// (all nine are 350 KB of text: a launch parses the one it uses).
struct CompiledTable {
  std::string release;
  std::string_view tsv;
  std::shared_ptr<const MegatronFlags> parsed;
};

std::vector<CompiledTable>& CompiledTables() {
  static std::vector<CompiledTable> tables = [] {
    std::vector<CompiledTable> found;
    for (std::string_view tsv : BuiltinMegatronFlagsTsvs()) {
      std::string_view first = tsv.substr(0, tsv.find('\n'));
      std::vector<std::string> words = Split(std::string(first), ' ');
      found.push_back({words.size() >= 3 ? words[2] : "", tsv, nullptr});
    }
    return found;
  }();
  return tables;
}

std::mutex& CompiledMutex() {
  static std::mutex mutex;
  return mutex;
}

std::shared_ptr<const MegatronFlags> Parsed(CompiledTable& table) {
  std::lock_guard<std::mutex> lock(CompiledMutex());
  if (!table.parsed) {
    auto parsed = MegatronFlags::Parse(table.tsv);
    if (!parsed.ok()) {
      std::cerr << "primus-cli: " << parsed.error().message << "\n";
      std::abort();  // the build embedded a broken table
    }
    table.parsed = std::make_shared<const MegatronFlags>(std::move(*parsed));
  }
  return table.parsed;
}

std::shared_ptr<const MegatronFlags> Newest() { return Parsed(CompiledTables().back()); }

// "size:mtime" of a file, "" when it is not there.
std::string Stamp(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return "";
  return std::to_string(status.st_size) + ":" + std::to_string(status.st_mtim.tv_sec) + "." +
         std::to_string(status.st_mtim.tv_nsec);
}

// Every "# source RELPATH SIZE MTIME_NS" line of a cached table still
// describes its file in the checkout.
bool SourcesUnchanged(const std::string& checkout, std::string_view table) {
  bool any = false;
  for (const std::string& line : Split(std::string(table), '\n')) {
    if (!line.starts_with("# source ")) continue;
    std::vector<std::string> words = Split(line.substr(9), ' ');
    if (words.size() != 3) return false;
    struct stat status {};
    if (::stat(JoinPath(checkout, words[0]).c_str(), &status) != 0) return false;
    long long mtime_ns = static_cast<long long>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec;
    if (std::to_string(status.st_size) != words[1] || std::to_string(mtime_ns) != words[2]) return false;
    any = true;
  }
  return any;
}

std::string CacheDir(const Environment& environment) {
  auto xdg = Lookup(environment, "XDG_CACHE_HOME");
  std::string base = xdg && xdg->starts_with("/") ? *xdg : "";
  if (base.empty()) {
    auto home = Lookup(environment, "HOME");
    base = JoinPath(home && !home->empty() ? *home : HomeDir(), ".cache");
  }
  return base;
}

// The checkout's own table: from the cache when its sources are unchanged,
// else read by python/megatron_option_table.py and cached.
Result<std::shared_ptr<const MegatronFlags>> ReadCheckoutTable(const std::string& checkout,
                                                               const MegatronTableRequest& request) {
  std::string real = checkout;
  if (char* resolved = ::realpath(checkout.c_str(), nullptr)) {
    real = resolved;
    std::free(resolved);
  }
  std::string key = DigestHex(Sha256(real + "\n" + Stamp(JoinPath(real, kArgumentsPy)) + "\n" +
                                     Stamp(JoinPath(real, kPackageInfoPy))));
  std::string base = CacheDir(request.environment);
  std::string cached = JoinPath(base, "primus-cli/megatron-options/" + key + ".tsv");
  if (auto text = ReadRegularFile(cached, kMaxTableBytes); text.ok() && SourcesUnchanged(real, *text)) {
    auto table = MegatronFlags::Parse(*text);
    if (table.ok()) return std::make_shared<const MegatronFlags>(std::move(*table));
  }
  std::string script = request.reader.empty() ? hooks::PythonApiFile("megatron_option_table.py") : request.reader;
  if (script.empty() || !PathExists(script)) {
    return UnavailableError("python/megatron_option_table.py is not beside primus-cli",
                            "reinstall primus-cli (share/primus-cli/python/)");
  }
  std::string release = CheckoutMegatronRelease(real);
  auto run = RunCommand({request.interpreter, script, JoinPath(real, kArgumentsPy), "--release",
                             release.empty() ? "checkout" : release + "+checkout", "--commit", "checkout", "--sources"},
                            {.timeout_s = 60});
  if (!run.ok()) return run.error();
  if (run->exit_code != 0) {
    return UnavailableError("reading the option table of " + real + " failed: " + std::string(Trim(run->Tail(3))));
  }
  auto table = MegatronFlags::Parse(run->out);
  if (!table.ok()) return table.error();
  // The cache is a convenience: a failure to write it only costs the next read.
  if (MakePrivateDirs(base, "primus-cli/megatron-options").ok()) {
    (void)WriteFileAtomic(cached, run->out, PrivateFileMode());
  }
  return std::make_shared<const MegatronFlags>(std::move(*table));
}

std::string ReleaseList() { return Join(CompiledMegatronReleases(), ", "); }

}  // namespace

std::vector<std::string> CompiledMegatronReleases() {
  std::vector<std::string> releases;
  for (const CompiledTable& table : CompiledTables()) releases.push_back(table.release);
  return releases;
}

std::shared_ptr<const MegatronFlags> CompiledMegatronTable(std::string_view release) {
  CompiledTable* found = nullptr;
  for (CompiledTable& table : CompiledTables()) {
    const std::string& tag = table.release;
    // "core_v0.13" takes core_v0.13.1, not core_v0.130.0: a prefix ends at a dot.
    if (tag == release || (tag.starts_with(release) && tag.size() > release.size() && tag[release.size()] == '.')) {
      found = &table;  // oldest first: the last match is the newest patch release
    }
  }
  return found ? Parsed(*found) : nullptr;
}

std::string CheckoutMegatronRelease(const std::string& checkout) {
  auto text = ReadRegularFile(JoinPath(checkout, kPackageInfoPy), 1 << 20);
  if (!text.ok()) return "";
  std::map<std::string, std::string> parts;
  for (const std::string& line : Split(*text, '\n')) {
    for (const char* name : {"MAJOR", "MINOR", "PATCH"}) {
      std::string prefix = std::string(name) + " = ";
      if (line.starts_with(prefix) && !parts.count(name)) {
        std::string number(Trim(line.substr(prefix.size())));
        if (!number.empty() && std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          parts[name] = number;
        }
      }
    }
  }
  if (parts.size() != 3) return "";
  return "core_v" + parts["MAJOR"] + "." + parts["MINOR"] + "." + parts["PATCH"];
}

Result<MegatronTable> ChooseMegatronTable(const MegatronTableRequest& request) {
  const Value& resolved = *request.resolved;
  const Value* release_value = resolved.Find("megatron.release");
  std::string release = release_value && release_value->IsScalar() ? std::string(Trim(release_value->ScalarText())) : "";
  if (release.empty()) release = "auto";
  std::string checkout;
  if (const Value* path = resolved.Find("megatron.path"); path && path->IsScalar()) checkout = path->ScalarText();
  if (checkout.empty()) checkout = Lookup(request.environment, "MEGATRON_PATH").value_or("");
  bool at_hand = !checkout.empty() && PathExists(JoinPath(checkout, kArgumentsPy));

  MegatronTable chosen;
  if (release != "auto" && release != "checkout") {
    chosen.flags = CompiledMegatronTable(release);
    if (!chosen.flags) {
      return config::ConfigErrorAt(release_value->origin(),
                                   "megatron.release " + release + ": no compiled option table of that release",
                                   "compiled: " + ReleaseList() +
                                       "; or auto / checkout: read the table of the checkout (megatron.path)");
    }
    chosen.source = chosen.flags->release() + " (compiled in; megatron.release " + release + ")";
    return chosen;
  }
  if (at_hand) {
    auto read = ReadCheckoutTable(checkout, request);
    if (read.ok()) {
      chosen.flags = *read;
      chosen.source = "the checkout " + checkout + " (" + std::to_string(chosen.flags->options().size()) +
                      " options read from its arguments.py)";
      return chosen;
    }
    if (release == "checkout") {
      return config::ConfigErrorAt(release_value->origin(), "megatron.release checkout: " + read.error().message,
                                   "name a compiled release instead (" + ReleaseList() + ")");
    }
    std::string version = CheckoutMegatronRelease(checkout);
    std::string minor = version.substr(0, version.rfind('.'));
    chosen.flags = version.empty() ? nullptr : CompiledMegatronTable(minor);
    if (chosen.flags) {
      chosen.source = chosen.flags->release() + " (compiled in; the checkout says " + version + ")";
    } else {
      chosen.flags = Newest();
      chosen.source = chosen.flags->release() + " (compiled in, the newest; the checkout's release is unknown)";
    }
    chosen.warnings.push_back(read.error().message + "; options are checked against " + chosen.source);
    return chosen;
  }
  if (release == "checkout") {
    return config::ConfigErrorAt(release_value->origin(),
                                 "megatron.release checkout: no Megatron-LM checkout here" +
                                     (checkout.empty() ? std::string(" (megatron.path and MEGATRON_PATH are unset)")
                                                       : " (" + checkout + " has no " + kArgumentsPy + ")"),
                                 "set megatron.path, or name a compiled release (" + ReleaseList() + ")");
  }
  chosen.flags = Newest();
  chosen.source = chosen.flags->release() + " (compiled in, the newest: no checkout here; megatron.release names "
                                            "another)";
  return chosen;
}

}  // namespace primus::train
