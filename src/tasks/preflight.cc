// The `preflight` task: find the broken node before the job does. Runs the
// checks asked for (default: host, gpu, network, software; --all adds --perf
// and a real `import torch`) on this node and, in a multi-node job (direct
// --nnodes, a Slurm step, a pod), lets node 0 judge every node
// (src/preflight/). Exit codes: 0 pass or warnings, 1 a check failed on some
// node, 2 bad arguments, 3 a --config experiment that does not load, 4 the
// nodes could not reach each other.

#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "config/launcher_config.h"
#include "platform/roots.h"
#include "preflight/preflight_runner.h"
#include "tasks/task.h"
#include "train/experiment.h"
#include "util/files.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& PreflightOptionsTable() {
  static const std::vector<OptionSpec> table = {
      {{"--host"}, K::kFlag, "", "", "memlock, /dev/shm, open files, disk, memory, numa_balancing and iommu=pt (AMD)"},
      {{"--gpu"}, K::kFlag, "", "", "count, model, memory and processes, ECC/RAS, PCIe links, XGMI, driver"},
      {{"--network"}, K::kFlag, "", "", "socket interfaces, RDMA ports and GIDs, MASTER_ADDR, MASTER_PORT"},
      {{"--software"}, K::kFlag, "", "", "python imports torch (for real), NCCL/RCCL (VCCL) and its version, venv/conda"},
      {{"--perf", "--perf-test"}, K::kFlag, "", "", "short GEMM and all-reduce runs on the GPUs against the device table"},
      {{"--tests"}, K::kValue, "LIST", "",
       "which --perf tests: gemm, intra-allreduce, intra-alltoall, inter-allreduce, inter-alltoall, inter-p2p, "
       "inter-ring-p2p, all (implies --perf)"},
      {{"--comm-sizes-mb"}, K::kValue, "MB,MB", "", "message sizes of the --perf collectives in MiB (default 64)"},
      {{"--intra-comm-sizes-mb"}, K::kValue, "MB,MB", "", "sizes of the collectives within a node (default: --comm-sizes-mb)"},
      {{"--inter-comm-sizes-mb"}, K::kValue, "MB,MB", "",
       "sizes of inter-allreduce, inter-alltoall and inter-p2p (default: --comm-sizes-mb)"},
      {{"--ring-p2p-sizes-mb"}, K::kValue, "MB,MB", "", "sizes of inter-ring-p2p (default 10,20,40,80,160)"},
      {{"--intra-group-sizes"}, K::kValue, "N,N", "",
       "GPU groups within a node (Primus); each must divide the node's GPUs; the full node is measured"},
      {{"--inter-group-sizes"}, K::kValue, "N,...|all", "",
       "node groups of the inter-node collectives (Primus); the full job (all) is measured"},
      {{"--dist-timeout-sec"}, K::kValue, "SECONDS", "", "how long nodes wait for each other (Primus's name of --timeout)"},
      {{"--comm-cleanup-delay-sec"}, K::kValue, "SECONDS", "",
       "pause between two inter-node runs, so that the last one's ports are closed everywhere (default 2)"},
      {{"--quick"}, K::kFlag, "", "", "fast --perf screen: gemm and all-reduce at 64 and 1024 MiB, fewer iterations"},
      {{"--all"}, K::kFlag, "", "", "everything above"},
      {{"--expect-gpus"}, K::kValue, "N", "", "the GPU count every node must have"},
      {{"--expect-model"}, K::kValue, "M", "", "the GPU model every node must have (MI300X, H100, ...)"},
      {{"--json"}, K::kFlag, "", "", "the results as JSON on standard output instead of text (node 0: every node's)"},
      {{"--output"}, K::kValue, "FILE.json", "", "write every node's results as JSON to FILE (node 0 in a multi-node job)"},
      // The old `--json FILE`, as UpdateOldJsonSpelling rewrites it: JSON to FILE, whatever its name.
      {{"--json-file"}, K::kValue, "FILE", "", "not here: the old --json FILE", false, false, false, true},
      {{"--report"}, K::kValue, "DIR", "", "where passing_nodes.txt and failing_nodes.txt go (default: here)"},
      {{"--config"}, K::kValue, "FILE", "", "an experiment file: its python.interpreter and workspace are checked"},
      {{"--python"}, K::kValue, "PATH", "", "the training interpreter (default: the experiment's, else python3 on PATH)"},
      {{"--workspace"}, K::kValue, "DIR", "", "where checkpoints go, for the free-disk check (default: here)"},
      {{"--timeout"}, K::kValue, "SECONDS", "", "how long nodes wait for each other (default 60)"},
  };
  return table;
}

struct PreflightArgs {
  preflight::PreflightOptions options;
  std::string experiment;  // --config
  bool python_given = false, workspace_given = false;
  std::vector<std::string> warnings;  // flags that have no effect as given
};

// `--json FILE` once named the JSON file; --json is a switch now (JSON on
// stdout) and --output FILE names the file. The old spelling still works:
// it becomes --output FILE, with a note.
std::vector<std::string> UpdateOldJsonSpelling(std::vector<std::string> args, size_t start,
                                               std::vector<std::string>* warnings) {
  const std::string note = "--json FILE is deprecated: use --output FILE (and --json for JSON on standard output)";
  for (size_t i = start; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--json" && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') {
      args[i] = "--json-file";
      warnings->push_back(note);
      ++i;
    } else if (args[i].starts_with("--json=") && !ParseBool(args[i].substr(7))) {
      args[i] = "--json-file=" + args[i].substr(7);
      warnings->push_back(note);
    }
  }
  return args;
}

Result<PreflightArgs> ParsePreflightArgs(const std::vector<std::string>& given) {
  size_t start = !given.empty() && given[0] == "check" ? 1 : 0;
  PreflightArgs result;
  std::vector<std::string> args = UpdateOldJsonSpelling(given, start, &result.warnings);
  auto parsed = ParseOptions(args, start, {&PreflightOptionsTable()}, UnknownOptionPolicy::kReject, "preflight");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for preflight", "see primus-cli preflight --help");
  }
  preflight::PreflightOptions& options = result.options;
  bool any = false, quick = false;
  std::string tests;                         // --tests LIST
  std::optional<std::vector<int>> sizes_mb;  // --comm-sizes-mb
  std::vector<int> intra_sizes, inter_sizes, ring_sizes;  // --intra-, --inter-comm-sizes-mb, --ring-p2p-sizes-mb
  std::string intra_groups, inter_groups;                  // --intra-, --inter-group-sizes
  std::optional<double> cleanup_delay_s;                   // --comm-cleanup-delay-sec
  std::vector<std::string> perf_tuning;                    // the perf-only flags given, for a warning
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    auto positive = [&](double lowest) -> Result<double> {
      auto value = ParseDouble(option.value);
      if (!value || *value < lowest) {
        return UsageError(option.written + " must be a number >= " + fmt::format("{:g}", lowest) + ", not '" + option.value + "'",
                          "e.g. " + option.written + " 8");
      }
      return *value;
    };
    if (name == "--host") options.host = any = true;
    else if (name == "--gpu") options.gpu = any = true;
    else if (name == "--network") options.network = any = true;
    else if (name == "--software") options.software = options.import_torch = any = true;
    else if (name == "--perf") options.perf = any = true;
    else if (name == "--quick") quick = options.perf = any = true;
    else if (name == "--tests") {
      tests = option.value;
      options.perf = any = true;
    } else if (name == "--comm-sizes-mb") {
      auto sizes = preflight::ParseSizesMb(option.value, option.written);
      if (!sizes.ok()) return sizes.error();
      sizes_mb = *sizes;
    } else if (name == "--intra-comm-sizes-mb" || name == "--inter-comm-sizes-mb" || name == "--ring-p2p-sizes-mb") {
      auto sizes = preflight::ParseSizesMb(option.value, option.written);
      if (!sizes.ok()) return sizes.error();
      (name == "--intra-comm-sizes-mb" ? intra_sizes : name == "--inter-comm-sizes-mb" ? inter_sizes : ring_sizes) = *sizes;
      perf_tuning.push_back(option.written);
    } else if (name == "--intra-group-sizes" || name == "--inter-group-sizes") {
      bool inter = name == "--inter-group-sizes";
      for (const std::string& raw : Split(option.value, ',')) {
        std::string word(Trim(raw));
        auto count = ParseInt(word);
        if (!(inter && word == "all") && (!count || *count < 1 || *count > 100000)) {
          return UsageError(option.written + ": '" + word + "' is not a group size" + (inter ? " or all" : ""),
                            "write e.g. " + option.written + (inter ? " 2,4,all" : " 2,4,8"));
        }
      }
      (inter ? inter_groups : intra_groups) = option.value;
      perf_tuning.push_back(option.written);
    } else if (name == "--dist-timeout-sec") {
      auto value = positive(0.1);
      if (!value.ok()) return value.error();
      options.timeout_s = *value;
    } else if (name == "--comm-cleanup-delay-sec") {
      auto value = ParseDouble(option.value);
      if (!value || *value < 0 || *value > 3600) {
        return UsageError(option.written + " must be seconds from 0 to 3600, not '" + option.value + "'",
                          "e.g. " + option.written + " 2");
      }
      cleanup_delay_s = *value;
      perf_tuning.push_back(option.written);
    }
    else if (name == "--all") {
      options.host = options.gpu = options.network = options.software = options.perf = options.import_torch = any = true;
    } else if (name == "--expect-gpus") {
      auto value = positive(0);
      if (!value.ok()) return value.error();
      options.expect.count = static_cast<int>(*value);
    } else if (name == "--expect-model") options.expect.model = option.value;
    else if (name == "--json") options.json = option.value == "true";
    else if (name == "--json-file") options.output_file = option.value;
    else if (name == "--output") {
      // The format follows the name, as everywhere (docs/cli.md): preflight's results are JSON.
      if (!ToLower(option.value).ends_with(".json")) {
        return UsageError("--output " + option.value + ": preflight writes its results as JSON; name the file *.json",
                          "write --output preflight.json");
      }
      options.output_file = option.value;
    }
    else if (name == "--report") options.report_dir = option.value;
    else if (name == "--python") options.python = option.value, result.python_given = true;
    else if (name == "--workspace") options.workspace = option.value, result.workspace_given = true;
    else if (name == "--config") result.experiment = option.value;
    else if (name == "--timeout") {
      auto value = positive(0.1);
      if (!value.ok()) return value.error();
      options.timeout_s = *value;
    }
  }
  options.perf_tests = quick ? preflight::QuickPerfTests() : preflight::PerfTests{};
  if (!tests.empty()) {
    auto selected = preflight::ParsePerfTests(tests, options.perf_tests);
    if (!selected.ok()) return selected.error();
    options.perf_tests = *selected;
  }
  options.perf_tests.intra_sizes_mb = intra_sizes;
  options.perf_tests.inter_sizes_mb = inter_sizes;
  if (!ring_sizes.empty()) options.perf_tests.ring_sizes_mb = ring_sizes;
  if (cleanup_delay_s) options.perf_tests.cleanup_delay_s = *cleanup_delay_s;
  const preflight::PerfTests& chosen = options.perf_tests;
  bool intra_selected = chosen.all_reduce || chosen.all_to_all;
  if (!intra_groups.empty() && intra_selected) {
    result.warnings.push_back("--intra-group-sizes " + intra_groups +
                              ": the collectives within a node run on all its GPUs; smaller groups are not measured");
  }
  if (!inter_groups.empty() && Trim(inter_groups) != "all" && (chosen.inter_all_reduce || chosen.inter_all_to_all)) {
    result.warnings.push_back("--inter-group-sizes " + inter_groups +
                              ": the inter-node collectives run across every node (all); node subgroups are not measured");
  }
  if (!perf_tuning.empty() && !any) {
    options.perf = true;  // tuning alone: the default checks, and the measurements so tuned (as --comm-sizes-mb)
  } else if (!perf_tuning.empty() && !options.perf) {
    result.warnings.push_back(Join(perf_tuning, ", ") + ": no effect without --perf, --quick or --tests");
  }
  if (sizes_mb) {
    options.perf_tests.sizes_mb = *sizes_mb;
    if (!any) {
      options.perf = true;  // sizes alone: the default checks, and the collectives at those sizes
    } else if (!options.perf) {
      result.warnings.push_back("--comm-sizes-mb has no effect without --perf, --quick or --tests");
    }
  }
  if (!any) options.host = options.gpu = options.network = options.software = true;  // the quick set
  return result;
}

class PreflightTask : public Task {
 public:
  std::string name() const override { return "preflight"; }
  std::string summary() const override { return "check hosts, GPUs, network and software before a job"; }
  std::vector<std::string> subtasks() const override { return {"check"}; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override {
    return {&PreflightOptionsTable()};
  }
  std::string help() const override {
    return "usage: primus-cli <mode> ... -- preflight [check] [--host] [--gpu] [--network] [--software] [--perf]\n"
           "                                       [--all]\n"
           "         [--quick] [--tests LIST] [--comm-sizes-mb MB,MB] [--expect-gpus N] [--expect-model M]\n"
           "         [--intra-comm-sizes-mb MB,MB] [--inter-comm-sizes-mb MB,MB] [--ring-p2p-sizes-mb MB,MB]\n"
           "         [--intra-group-sizes N,N] [--inter-group-sizes N,all] [--dist-timeout-sec S]\n"
           "         [--comm-cleanup-delay-sec S]\n"
           "         [--json] [--output FILE] [--report DIR]\n"
           "\n"
           "Every check reports PASS, WARN, FAIL or SKIP with the value, the expectation and a fix.\n"
           "Without a category flag: host, gpu, network and software, quickly (torch's version is read\n"
           "from its package, not imported). In a multi-node job (direct --nnodes N, slurm, k8s) node 0\n"
           "gathers every node's results over MASTER_PORT, measures latency, clock skew and bandwidth to\n"
           "each, compares them, and writes passing_nodes.txt and failing_nodes.txt.\n"
           "\n" +
           FormatOptionHelp(PreflightOptionsTable()) +
           "\nExamples:\n"
           "  primus-cli direct -- preflight check --gpu --network\n"
           "  primus-cli slurm srun -N 4 -- preflight --perf --quick --output preflight.json\n"
           "\nExit codes: 0 pass or warnings, 1 a check failed (on any node), 2 bad arguments,\n"
           "3 the --config experiment does not load, 4 the nodes could not reach each other.\n"
           "docs/preflight.md lists every check.\n";
  }
  Result<int> Run(const TaskContext& context) override {
    auto args = ParsePreflightArgs(context.args);
    if (!args.ok()) return args.error();
    preflight::PreflightOptions* options = &args->options;
    if (!args->experiment.empty()) {
      // The experiment's own interpreter and workspace, unless given here.
      auto experiment = train::LoadExperiment({args->experiment, {}, ProcessEnvironment()});
      if (!experiment.ok()) return experiment.error();
      if (!args->python_given && !experiment->interpreter.empty()) options->python = experiment->interpreter;
      if (!args->workspace_given && !experiment->workspace.empty()) options->workspace = experiment->workspace;
    }
    preflight::JobPlacement placement;
    placement.nnodes = static_cast<int>(context.launcher->GetInt("direct.nnodes"));
    placement.node_rank = static_cast<int>(context.launcher->GetInt("direct.node_rank"));
    placement.master_addr = context.launcher->GetString("direct.master_addr");
    placement.master_port = static_cast<int>(context.launcher->GetInt("direct.master_port"));
    if (placement.nnodes > 1 && placement.master_port == 0) placement.master_port = 29500;  // torchrun's default
    if (placement.nnodes > 1 && placement.master_addr.empty()) {
      return UsageError("a multi-node preflight needs node 0's address", "give --master-addr A on every node");
    }
    std::map<std::string, std::string> env = ProcessEnvironment();
    if (auto nodelist = env.find("SLURM_JOB_NODELIST"); nodelist != env.end()) {
      auto hosts = ExpandHostlist(nodelist->second);
      if (!hosts.ok()) {
        return Error{ExitCode::kUnavailable, "SLURM_JOB_NODELIST: " + hosts.error().message,
                     "this variable comes from Slurm; run preflight inside the job, or unset it"};
      }
      placement.hosts = *hosts;
    }
    for (const std::string& warning : args->warnings) log::Warn("{}", warning);
    if (context.dry_run) {
      std::vector<std::string> checks;
      for (auto [on, name] : {std::pair{options->host, "host"}, std::pair{options->gpu, "gpu"},
                              std::pair{options->network, "network"}, std::pair{options->software, "software"}}) {
        if (on) checks.push_back(name);
      }
      if (options->perf) checks.push_back("perf: " + preflight::DescribePerfTests(options->perf_tests));
      std::cout << "preflight would run on node " << placement.node_rank << " of " << placement.nnodes
                << "; nothing is checked under --dry-run\nchecks: " << Join(checks, "; ") << "\n";
      return 0;
    }
    Result<std::string> self = SelfExecutable();
    return preflight::RunPreflight(*options, placement, platform::Roots::FromEnvironment(), env,
                                   self.ok() ? *self : std::string("primus-cli"));
  }
};

TaskRegistration<PreflightTask> preflight_registration;

}  // namespace
}  // namespace primus::tasks
