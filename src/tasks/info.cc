// The `info` task: what primus-cli sees on this host, and the environment the
// workers would get, with the origin of every variable.
#include <iostream>
#include <nlohmann/json.hpp>

#include "util/environment.h"
#include "platform/environment_plan.h"
#include "platform/host_detect.h"
#include "platform/launcher_plan_request.h"
#include "platform/info_report.h"
#include "platform/profile_chain.h"
#include "platform/gpu_live_status.h"
#include "platform/visible_devices.h"
#include "tasks/task.h"
#include "train/primus_install.h"
#include "util/files.h"
#include "util/option_parser.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& InfoOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--json"}, K::kFlag, "", "",
       "JSON on standard output; keys: version, host, drivers, gpus, nics, profile_chain, env, notes, warnings, "
       "visible_gpus, primus"},
      {{"--live"}, K::kFlag, "", "",
       "add memory in use, utilisation, ECC and GPU processes (NVML / amd-smi when installed, KFD sysfs on AMD)"},
  };
  return table;
}

class InfoTask : public Task {
 public:
  std::string name() const override { return "info"; }
  std::string summary() const override { return "show the GPUs, network and environment primus-cli sees on this host"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&InfoOptions()}; }
  std::string help() const override {
    return "usage: primus-cli [global options] [direct --] info [--json] [--live]\n"
           "\n"
           "GPUs (model, architecture, memory, PCI address, NUMA node, XGMI), RDMA ports\n"
           "and interfaces, CPUs and NUMA nodes, the profile chain, and every environment\n"
           "variable the workers would get with where it came from (profile file and line,\n"
           "user environment, network auto-config, --env). Reads sysfs and procfs only.\n"
           "\n" +
           FormatOptionHelp(InfoOptions()) +
           "\nPRIMUS_SYSFS_ROOT, PRIMUS_PROCFS_ROOT and PRIMUS_ETC_ROOT read a captured tree\n"
           "instead of this host's. See docs/platform.md and docs/profiles.md.\n"
           "\nExamples:\n"
           "  primus-cli info\n"
           "  primus-cli info --json | jq '.gpus | length'\n"
           "\nExit codes: 0, 2 bad arguments.\n";
  }

  Result<int> Run(const TaskContext& context) override {
    auto parsed = ParseOptions(context.args, 0, {&InfoOptions()}, UnknownOptionPolicy::kReject, "info");
    if (!parsed.ok()) return parsed.error();
    if (parsed->next < context.args.size()) {
      return UsageError("unexpected argument '" + context.args[parsed->next] + "' for info", "usage: info [--json] [--live]");
    }
    bool as_json = false, live = false;
    for (const ParsedOption& option : parsed->options) {
      (option.spec->names.front() == "--json" ? as_json : live) = option.value == "true";
    }
    if (context.dry_run) return 0;

    platform::Roots roots = platform::Roots::FromEnvironment();
    platform::HostInfo host = platform::DetectHost(roots);
    platform::EnvironmentPlanRequest request =
        platform::PlanRequestFromLauncher(*context.launcher, ProcessEnvironment());
    auto plan = platform::ResolveEnvironment(host, request);
    if (!plan.ok()) return plan.error();

    int visible = platform::CountVisibleGpus(host, request.current_environment);
    train::PrimusSearch primus = train::FindPrimus(ProcessEnvironment(),
                                                   context.launcher->GetString("train.primus_path"), CurrentDir(),
                                                   train::UsualPrimusPlaces());
    if (as_json) {
      nlohmann::ordered_json info = platform::InfoJson(host, *plan);
      info["version"] = PRIMUS_VERSION;
      info["visible_gpus"] = visible;
      if (primus.install) {
        info["primus"] = {{"root", primus.install->root}, {"found_by", primus.install->found_by},
                          {"version", primus.install->version}};
      } else {
        info["primus"] = nullptr;
      }
      if (live) {
        nlohmann::ordered_json statuses = nlohmann::ordered_json::array();
        for (const platform::GpuLiveStatus& status : platform::QueryLiveStatus(host, roots)) {
          nlohmann::ordered_json processes = nlohmann::ordered_json::array();
          for (const auto& process : status.processes) {
            processes.push_back({{"pid", process.pid}, {"used_memory_bytes", process.used_memory_bytes}});
          }
          statuses.push_back({{"pci_bus_id", status.pci_bus_id}, {"sources", status.sources},
                              {"memory_used_bytes", status.memory_used_bytes},
                              {"memory_total_bytes", status.memory_total_bytes},
                              {"utilization_percent", status.utilization_percent},
                              {"ecc_corrected", status.ecc_corrected}, {"ecc_uncorrected", status.ecc_uncorrected},
                              {"processes", processes}});
        }
        info["live"] = statuses;
      }
      std::cout << info.dump(2) << "\n";
      return 0;
    }
    std::cout << "primus-cli " << PRIMUS_VERSION << "\n" << platform::InfoText(host, *plan);
    // Which Primus runs Primus-format experiments and Primus's own subcommands.
    if (primus.install) {
      std::cout << "primus    " << primus.install->version << " at " << primus.install->root << " (found by "
                << primus.install->found_by << ")\n";
    } else {
      std::cout << "primus    none: " << (primus.broken_setting.empty() ? "not found" : primus.broken_setting)
                << " (Primus-format experiments need one: export PRIMUS_PATH)\n";
    }
    if (visible != static_cast<int>(host.gpus.size())) {
      std::cout << "visible   " << visible << " of " << host.gpus.size()
                << " GPUs (CUDA/HIP/ROCR_VISIBLE_DEVICES)\n";
    }
    if (live) {
      for (const platform::GpuLiveStatus& status : platform::QueryLiveStatus(host, roots)) {
        std::cout << "live      " << status.pci_bus_id << "  used "
                  << (status.memory_used_bytes < 0 ? std::string("?") : std::to_string(status.memory_used_bytes >> 20) + " MiB")
                  << "  util " << (status.utilization_percent < 0 ? std::string("?") : std::to_string(status.utilization_percent) + "%")
                  << "  processes " << status.processes.size() << "\n";
      }
    }
    return 0;
  }
};

TaskRegistration<InfoTask> info_registration;

}  // namespace
}  // namespace primus::tasks
