#include "preflight/software_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

#include "util/dynamic_library.h"
#include "util/files.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::preflight {
namespace {

const std::string kSoftware = "software";

// The interpreter's path as the shell would find it.
std::string Resolve(const std::string& python) {
  if (python.find('/') != std::string::npos) return python;
  std::string found = FindExecutable(python);
  return found;
}

}  // namespace

std::string NcclVersionText(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::vector<CheckResult> CheckSoftware(const platform::HostInfo& host, const SoftwareSettings& settings,
                                       SoftwareFacts* facts) {
  std::vector<CheckResult> results;
  std::string python = Resolve(settings.python);
  if (python.empty() || !IsExecutableFile(python)) {
    results.push_back(Fail(kSoftware, "python", settings.python + " not found", "an interpreter with torch",
                           "install Python or name the training interpreter with --python PATH"));
  } else {
    const char* probe = settings.import_torch
                            ? "import torch; print(torch.__version__)"
                            : "import importlib.metadata as m; print(m.version('torch'))";
    auto run = RunCommand({python, "-c", probe}, {.timeout_s = 120});
    std::string version = run.ok() ? std::string(Trim(run->out)) : "";
    if (!run.ok() || run->exit_code != 0 || version.empty()) {
      std::string why = run.ok() ? std::string(Trim(run->Tail(1))) : run.error().message;
      results.push_back(Fail(kSoftware, "torch", python + ": " + (why.empty() ? "no torch" : why),
                             settings.import_torch ? "imports torch" : "has torch installed",
                             "install torch into this interpreter, or activate the right environment (--python PATH)"));
    } else {
      facts->torch_version = version;
      results.push_back(Pass(kSoftware, "torch", version + " (" + python + (settings.import_torch ? ", imported" : "") + ")",
                             "the same on every node"));
    }
    // The environment the interpreter should come from.
    auto venv = settings.env.find("VIRTUAL_ENV");
    auto conda = settings.env.find("CONDA_PREFIX");
    std::string prefix = venv != settings.env.end() ? venv->second : conda != settings.env.end() ? conda->second : "";
    if (prefix.empty()) {
      results.push_back(Pass(kSoftware, "environment", "no venv/conda active: " + python, "the training interpreter"));
    } else if (!python.starts_with(prefix + "/")) {
      results.push_back(Warn(kSoftware, "environment", python + " is outside the active environment " + prefix,
                             "the interpreter of " + prefix,
                             "activate the environment on every node, or pass --python " + prefix + "/bin/python"));
    } else {
      results.push_back(Pass(kSoftware, "environment", python + " in " + prefix, "the interpreter of the active environment"));
    }
  }
  if (host.gpus.empty()) {
    results.push_back(Skip(kSoftware, "collective library", "no GPU: CPU ranks use gloo"));
    return results;
  }
  bool amd = host.gpus.front().vendor == "amd";
  std::string what = amd ? "RCCL" : "NCCL";
  auto library = DynamicLibrary::Open(
      amd ? std::vector<std::string>{"librccl.so.1", "librccl.so"} : std::vector<std::string>{"libnccl.so.2", "libnccl.so"},
      what, "");
  if (!library.ok()) {
    results.push_back(Fail(kSoftware, "collective library", what + " not found by the loader",
                           what + " loadable by the workers",
                           amd ? "install ROCm's RCCL or add its lib directory to LD_LIBRARY_PATH"
                               : "install NCCL (or torch's nvidia-nccl wheel) or add its lib directory to LD_LIBRARY_PATH"));
    return results;
  }
  int code = 0;
  using GetVersion = int (*)(int*);
  GetVersion get_version = reinterpret_cast<GetVersion>(library->Find("ncclGetVersion"));
  std::string version = get_version != nullptr && get_version(&code) == 0 ? NcclVersionText(code) : "version unknown";
  bool vccl = FileContains(library->path(), "VCCL");
  facts->collective = what + " " + version + (vccl ? " (VCCL build)" : "");
  results.push_back(Pass(kSoftware, "collective library", facts->collective + " at " + library->path(),
                         "loadable, the same on every node"));
  return results;
}

}  // namespace primus::preflight
