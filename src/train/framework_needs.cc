#include "train/framework_needs.h"

#include "util/strings.h"

namespace primus::train {
namespace {

// Prints each argument that names no module this interpreter can find.
constexpr const char kFindModules[] =
    "import importlib.util, sys\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        found = importlib.util.find_spec(name) is not None\n"
    "    except Exception:\n"
    "        found = False\n"
    "    if not found:\n"
    "        print(name)\n";

std::string ResolvedText(const ExperimentConfig& experiment, std::string_view key) {
  const config::Value* value = experiment.resolved.Find(key);
  return value && value->IsScalar() ? value->ScalarText() : "";
}

}  // namespace

FrameworkNeeds NeedsOf(const ExperimentConfig& experiment, int visible_gpus) {
  FrameworkNeeds needs;
  const std::string& backend = experiment.backend;
  if (backend == "megatron" || backend == "torchtitan") {
    needs.gpu_per_worker = true;
    needs.gpus_because = "the " + backend + " backend";
    needs.modules = {"torch"};
    if (backend == "torchtitan") needs.modules.push_back("torchtitan");
  } else if (backend == "primus") {  // Primus checks its GPUs itself
    needs.modules = {"torch"};
  } else if (backend == "torch") {
    // A script of one's own (torch.training_flags false) chooses its device
    // and imports itself: nothing is presumed of it.
    if (ResolvedText(experiment, "torch.training_flags") == "false") return needs;
    needs.modules = {"torch"};
    std::string device = ResolvedText(experiment, "training.device");
    if (device == "cuda") {
      needs.gpu_per_worker = true;
      needs.gpus_because = "training.device cuda";
    } else if (device == "auto" && visible_gpus > 0) {
      needs.gpu_per_worker = true;
      needs.gpus_because = "training.device auto on a host with GPUs";
    }
  }
  return needs;
}

Status CheckGpusFit(const FrameworkNeeds& needs, int nproc_per_node, int visible, const std::string& host,
                    const std::string& visibility) {
  if (!needs.gpu_per_worker || nproc_per_node <= visible) return Status::Ok();
  std::string seen = visible == 0 ? "no GPU is visible" : std::to_string(visible) + " GPU(s) are visible";
  if (!visibility.empty()) seen += " (" + visibility + ")";
  std::string hint = visible == 0
                         ? "run it on a GPU host, or for the torch backend set training.device=cpu"
                         : "give --nproc-per-node " + std::to_string(visible) +
                               " (or auto: one per visible GPU), or make more GPUs visible";
  return UnavailableError(std::to_string(nproc_per_node) + " worker(s) per node would each take a GPU (" +
                              needs.gpus_because + "), but on " + host + " " + seen,
                          hint);
}

std::vector<std::string> FindModulesArgs(const FrameworkNeeds& needs) {
  std::vector<std::string> args = {"-c", kFindModules};
  args.insert(args.end(), needs.modules.begin(), needs.modules.end());
  return args;
}

Status CheckModulesFound(const FrameworkNeeds& needs, const std::string& output, const std::string& interpreter,
                         const std::string& backend) {
  std::vector<std::string> missing;
  for (std::string_view line : Split(output, '\n')) {
    std::string name(Trim(line));
    // Only names that were asked for count: the output is the interpreter's.
    for (const std::string& wanted : needs.modules) {
      if (name == wanted) missing.push_back(name);
    }
  }
  if (missing.empty()) return Status::Ok();
  return UnavailableError("the " + backend + " backend's workers need " + Join(missing, " and ") + ", which " +
                              interpreter + " cannot import (no worker was started)",
                          "install " + Join(missing, " and ") + " for " + interpreter +
                              ", or name an interpreter that has it: python.interpreter or python.venv in the "
                              "experiment");
}

}  // namespace primus::train
