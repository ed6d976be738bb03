// The `primus` task: a subcommand of Primus's own CLI (projection, data,
// node_smoke, and any other its installation has), run by that
// installation's primus/cli/main.py as the job's workers, under the node
// agent, as the public Primus launcher runs it. The command line parser
// sends Primus-only subcommands here (`direct -- projection ...` is
// `direct -- primus projection ...`); our own train, benchmark and
// preflight stay ours. node_smoke runs one process per node, as in Primus.
#include <algorithm>
#include <iostream>

#include "config/launcher_config.h"
#include "platform/launcher_plan_request.h"
#include "tasks/task.h"
#include "tasks/worker_launch.h"
#include "train/primus_install.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

class PrimusTask : public Task {
 public:
  std::string name() const override { return "primus"; }
  std::string summary() const override { return "run a subcommand of Primus's own CLI (projection, data, node_smoke, ...)"; }
  std::string help() const override {
    return "usage: primus-cli <mode> ... -- primus SUBCOMMAND [ARGS...]\n"
           "       primus-cli <mode> ... -- projection|data|node_smoke|deps [ARGS...]\n"
           "\n"
           "Runs <python> <primus>/primus/cli/main.py SUBCOMMAND ARGS as the job's workers (one per\n"
           "local rank; node_smoke: one per node), with the arguments passed verbatim. The Primus\n"
           "installation comes from PRIMUS_PATH, train.primus_path, the current directory, or\n"
           "/workspace/Primus (`info` and --dry-run say which). Subcommands that are ours too\n"
           "(train, benchmark, preflight) run ours; `primus train ...` runs Primus's.\n"
           "\nExamples:\n"
           "  primus-cli direct -- projection performance --config exp.yaml\n"
           "  primus-cli slurm srun -N 2 -- primus node_smoke\n"
           "\nExit codes: the Primus command's own; 4 no Primus installation found.\n";
  }
  bool IsHelpRequest(const std::vector<std::string>& args) const override {
    return !args.empty() && (args[0] == "--help" || args[0] == "-h");
  }

  Result<int> Run(const TaskContext& context) override {
    if (context.args.empty()) {
      return UsageError("task 'primus' needs a subcommand of Primus's CLI", "write: primus-cli direct -- primus projection ...");
    }
    const std::string& subcommand = context.args.front();
    auto install = train::PrimusInstallFor(ProcessEnvironment(), *context.launcher);
    if (!install.ok()) {
      return Error{install.error().code,
                   "'" + subcommand + "' is a subcommand of Primus's own CLI, which runs from a Primus installation; " +
                       install.error().message,
                   install.error().hint};
    }
    std::vector<std::string> known = train::PrimusSubcommands(*install);
    if (std::find(known.begin(), known.end(), subcommand) == known.end()) {
      return UsageError("Primus " + install->version + " at " + install->root + " has no subcommand '" + subcommand + "'" +
                            DidYouMean(subcommand, known),
                        "its subcommands: " + Join(known, ", "));
    }
    std::vector<std::string> argv = {"python3", install->main_py()};
    argv.insert(argv.end(), context.args.begin(), context.args.end());
    bool one_per_node =
        subcommand == "node_smoke" && !platform::SetExplicitly(context.launcher->OriginOf("direct.nproc_per_node"));
    auto launch = PrepareWorkerLaunch(*context.launcher, {}, [&](agent::LaunchSpec* spec) {
      if (one_per_node) {  // one per node by design, as Primus runs it
        spec->nproc_per_node = 1;
        spec->nproc_per_node_auto = false;
      }
      if (!spec->env.count("PRIMUS_PATH")) spec->env["PRIMUS_PATH"] = install->root;
    });
    if (!launch) return launch.error();
    launch->spec.argv = std::move(argv);
    std::cerr << "through Primus " << install->version << " at " << install->root << " (found by " << install->found_by
              << "): " << subcommand << "\n";
    if (context.dry_run) {
      std::cout << DescribeWorkerLaunch(*launch);
      return 0;
    }
    auto result = RunWorkerLaunch(*launch);
    if (!result) return result.error();
    return WorkerLaunchExitCode(*result, *context.launcher);
  }
};

TaskRegistration<PrimusTask> primus_registration;

}  // namespace
}  // namespace primus::tasks
