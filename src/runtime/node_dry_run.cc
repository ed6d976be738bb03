#include "runtime/node_dry_run.h"

#include <iostream>

#include "io/subprocess.h"
#include "runtime/batch_script.h"
#include "util/environment.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// "experiment file x does not exist" of "[2026-...] [host] [ERROR] experiment file x does not exist".
struct Reported {
  std::string message, hint;
};

Reported FirstError(const std::string& err) {
  Reported reported;
  for (const std::string& line : Split(err, '\n')) {
    size_t at = line.find("[ERROR] ");
    std::string text = at != std::string::npos ? line.substr(at + 8)
                       : line.starts_with("primus-cli: error: ") ? line.substr(19)
                                                                 : "";
    if (text.empty()) continue;
    if (text.starts_with("hint: ")) {
      if (reported.hint.empty()) reported.hint = text.substr(6);
    } else if (reported.message.empty()) {
      reported.message = text;
    }
  }
  return reported;
}

}  // namespace

Status CheckNodeCommand(const NodeDryRun& request) {
  if (request.node_command.empty()) return Status::Ok();
  std::vector<std::string> argv = {request.node_command.front(), "--dry-run"};
  argv.insert(argv.end(), request.node_command.begin() + 1, request.node_command.end());
  CommandOptions options;
  options.timeout_s = 60;
  // Node 0's layout; the variables of a scheduler this host is in do not apply there.
  if (request.nnodes > 1) {
    options.env["PRIMUS_DIRECT_NNODES"] = std::to_string(request.nnodes);
    options.env["PRIMUS_DIRECT_NODE_RANK"] = "0";
    if (!Lookup(ProcessEnvironment(), "PRIMUS_DIRECT_MASTER_ADDR")) options.env["PRIMUS_DIRECT_MASTER_ADDR"] = "127.0.0.1";
    options.env["PRIMUS_DIRECT_PLATFORM"] = "none";
  }
  if (request.gpus_per_node > 0 && !Lookup(ProcessEnvironment(), "PRIMUS_DIRECT_NPROC_PER_NODE")) {
    options.env["SLURM_GPUS_ON_NODE"] = std::nullopt;
    options.env["PRIMUS_DIRECT_NPROC_PER_NODE"] = std::to_string(request.gpus_per_node);
  }
  auto run = RunCommand(argv, options);
  if (!run.ok()) return run.error();
  bool layout_guessed = false;
  if (run->exit_code == static_cast<int>(ExitCode::kConfig) && request.gpus_per_node == 0 && !request.in_image &&
      !Lookup(ProcessEnvironment(), "PRIMUS_DIRECT_NPROC_PER_NODE")) {
    // The nodes' GPUs are not known here (a login node has none): if the
    // command fits nodes of 8 GPUs, it is the layout, not the command.
    CommandOptions eight = options;
    eight.env["PRIMUS_DIRECT_NPROC_PER_NODE"] = "8";
    auto again = RunCommand(argv, eight);
    if (again.ok() && again->exit_code == 0) layout_guessed = true;
  }
  std::string described = "primus-cli --dry-run " + ShellJoin(std::vector<std::string>(
                                                        request.node_command.begin() + 1, request.node_command.end()));
  if (run->exit_code == 0) {
    std::cout << "checked: " << request.where << " accepts its command (" << described << ", as node 0 of "
              << request.nnodes << ")\n"
              << std::flush;
    return Status::Ok();
  }
  Reported reported = FirstError(run->err);
  if (reported.message.empty()) reported.message = std::string(Trim(run->Tail(2)));
  if (run->exit_code == static_cast<int>(ExitCode::kUnavailable)) {
    log::Warn("{} may lack what this host lacks: {} (its own --dry-run here stopped there; the nodes or the image "
              "may have it)",
              request.where, reported.message);
    return Status::Ok();
  }
  if (layout_guessed) {
    log::Warn("{} accepts its command with 8 GPUs per node, not with this host's workers per node: {} (give srun "
              "--gpus-per-node N, or --nproc-per-node N, to check the layout the nodes will have)",
              request.where, reported.message);
    return Status::Ok();
  }
  if (request.in_image && reported.message.find("EXP=FILE in the environment") != std::string::npos) {
    log::Warn("{} would refuse its command unless the image sets EXP: {}", request.where, reported.message);
    return Status::Ok();
  }
  ExitCode code = run->exit_code == static_cast<int>(ExitCode::kUsage) ? ExitCode::kUsage : ExitCode::kConfig;
  return Error{code, request.where + " would refuse its command: " + reported.message,
               reported.hint.empty() ? "run " + described + " to see it" : reported.hint};
}

int GpusPerNodeOf(const std::vector<std::string>& flags) {
  auto count = [](std::string_view text) -> int {
    std::optional<int64_t> value = ParseInt(Trim(text));
    return value && *value >= 1 && *value <= 1024 ? static_cast<int>(*value) : 0;
  };
  if (std::optional<std::string> gpus = FlagValue(flags, "--gpus-per-node", "")) {
    return count(Split(*gpus, ':').back());  // N or TYPE:N
  }
  if (std::optional<std::string> gres = FlagValue(flags, "--gres", "")) {
    for (const std::string& item : Split(*gres, ',')) {
      std::vector<std::string> parts = Split(item, ':');
      if (parts.size() >= 2 && parts.front() == "gpu") return count(parts.back());
    }
  }
  return 0;
}

}  // namespace primus::runtime
