#include "agent/launch_spec_from_config.h"

#include <algorithm>

#include "agent/launch_plan.h"
#include "agent/rank_list.h"
#include "agent/stream_selection.h"
#include "telemetry/progress_line.h"
#include "platform/launcher_plan_request.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

Result<int> IntKey(const config::LauncherConfig& launcher, std::string_view key) {
  int64_t value = launcher.GetInt(key);
  if (value < INT32_MIN || value > INT32_MAX) {
    return config::ConfigErrorAt(launcher.OriginOf(key), std::string(key) + " is out of range");
  }
  return static_cast<int>(value);
}

// direct.nproc_per_node: a number, "cpu" (usable CPUs), or "auto"/"gpu",
// which ApplyPlatform counts on the detected host (1 until then; "gpu" with
// no GPU visible is an error there, as in torchrun).
Status ReadNprocPerNode(std::string_view text, LaunchSpec* spec) {
  std::string value = ToLower(Trim(text));
  if (value == "auto" || value == "gpu") {
    spec->nproc_per_node = 1;
    spec->nproc_per_node_auto = true;
    spec->nproc_per_node_gpu = value == "gpu";
    return Status::Ok();
  }
  if (value == "cpu") {
    spec->nproc_per_node = UsableCpuCount();
    return Status::Ok();
  }
  std::optional<int64_t> number = ParseInt(value);
  if (!number || *number < 1 || *number > 4096) {
    return UsageError("nproc_per_node '" + std::string(text) + "' is not a number of workers",
                      "give a number (1 or more), auto (one per GPU) or cpu");
  }
  spec->nproc_per_node = static_cast<int>(*number);
  return Status::Ok();
}

}  // namespace

Result<LaunchSpec> LaunchSpecFromConfig(const config::LauncherConfig& launcher) {
  LaunchSpec spec;
  if (Status status = ReadNprocPerNode(launcher.GetString("direct.nproc_per_node"), &spec); !status) {
    return status.error();
  }
  for (auto [key, field] : {std::pair{"direct.nnodes", &spec.nnodes},
                            std::pair{"direct.node_rank", &spec.node_rank},
                            std::pair{"direct.min_nnodes", &spec.min_nnodes},
                            std::pair{"direct.master_port", &spec.master_port},
                            std::pair{"direct.control_port", &spec.control_port},
                            std::pair{"direct.metrics_port", &spec.metrics_port},
                            std::pair{"direct.max_restarts", &spec.max_restarts}}) {
    auto value = IntKey(launcher, key);
    if (!value) return value.error();
    *field = *value;
  }
  spec.master_addr = launcher.GetString("direct.master_addr");
  spec.rendezvous = launcher.GetString("direct.rendezvous");
  if (!IsRendezvous(spec.rendezvous)) {
    return config::ConfigErrorAt(launcher.OriginOf("direct.rendezvous"),
                                 "direct.rendezvous must be static, c10d or etcd-v2, not '" + spec.rendezvous + "'",
                                 "static: every node gets --node-rank; c10d: the endpoint's host coordinates");
  }
  spec.rdzv_endpoint = launcher.GetString("direct.rdzv_endpoint");
  spec.local_addr = launcher.GetString("direct.local_addr");
  spec.last_call_timeout_s = launcher.GetDouble("direct.last_call_timeout");
  spec.telemetry_interval_s = launcher.GetDouble("direct.telemetry_interval");
  auto progress_format = telemetry::ParseProgressFormat(launcher.GetString("direct.progress_format"));
  if (!progress_format) {
    return config::ConfigErrorAt(launcher.OriginOf("direct.progress_format"), progress_format.error().message,
                                 progress_format.error().hint);
  }
  spec.progress_format = *progress_format;
  spec.progress_regex = launcher.GetString("direct.progress_regex");
  spec.tensorboard = launcher.GetBool("direct.tensorboard");
  if (spec.progress_format == telemetry::ProgressFormat::kRegex && spec.progress_regex.empty()) {
    return config::ConfigErrorAt(launcher.OriginOf("direct.progress_format"),
                                 "direct.progress_format is regex, but direct.progress_regex gives no pattern",
                                 "add --progress-regex 'it (?P<step>\\d+) loss (?P<loss>[0-9.]+)' (RE2, named groups)");
  }
  if (spec.progress_format == telemetry::ProgressFormat::kRegex) {
    auto checked = telemetry::ProgressLineReader::Create(spec.progress_format, spec.progress_regex);
    if (!checked) {
      return config::ConfigErrorAt(launcher.OriginOf("direct.progress_regex"), checked.error().message,
                                   checked.error().hint);
    }
  }
  spec.restart_backoff_s = launcher.GetDouble("direct.restart_backoff");
  spec.term_timeout_s = launcher.GetDouble("direct.term_timeout");
  spec.hang_timeout_s = launcher.GetDouble("direct.hang_timeout");
  spec.exit_grace_s = launcher.GetDouble("direct.exit_grace");
  spec.join_timeout_s = launcher.GetDouble("direct.join_timeout");
  spec.exit_barrier_timeout_s = launcher.GetDouble("direct.exit_barrier_timeout");
  spec.heartbeat_interval_s = launcher.GetDouble("direct.heartbeat_interval");
  spec.heartbeat_timeout_s = launcher.GetDouble("direct.heartbeat_timeout");
  spec.restarts_before = launcher.scheduler().restart_count;
  spec.log_dir = launcher.GetString("direct.log_dir");
  spec.torchrun_log_files = launcher.GetBool("direct.torchrun_log_files");
  spec.virtual_local_rank = launcher.GetBool("direct.virtual_local_rank");
  spec.stack_dumper = launcher.GetBool("direct.stack_dumper");
  spec.flight_recorder = launcher.GetBool("direct.flight_recorder");
  spec.exclude_bad_nodes = launcher.GetBool("direct.exclude_bad_nodes");
  spec.spare_nodes = static_cast<int>(std::clamp<int64_t>(launcher.GetInt("direct.spare_nodes"), 0, 1'000'000));
  for (const std::string& raw : Split(launcher.GetString("direct.framework_env"), ',')) {
    std::string name = ToLower(std::string(Trim(raw)));
    if (name.empty()) continue;
    if (name == "tf") name = "tensorflow";
    if (name != "jax" && name != "tensorflow") {
      return config::ConfigErrorAt(launcher.OriginOf("direct.framework_env"),
                                   "direct.framework_env: '" + name + "' is not a framework we set variables for",
                                   "jax (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID) or tensorflow "
                                   "(TF_CONFIG); torchrun's variables are always set");
    }
    if (std::find(spec.framework_env.begin(), spec.framework_env.end(), name) == spec.framework_env.end()) {
      spec.framework_env.push_back(name);
    }
  }
  spec.console_prefix = launcher.GetString("direct.console_prefix");
  auto ranks = ParseRankList(launcher.GetString("direct.ranks_filter"));
  if (!ranks) return ranks.error();
  spec.ranks_filter = std::move(*ranks);
  auto local_ranks = ParseRankList(launcher.GetString("direct.local_ranks_filter"));
  if (!local_ranks) return local_ranks.error();
  spec.local_ranks_filter = std::move(*local_ranks);
  for (auto [key, field] : {std::pair{"direct.redirects", &spec.redirects}, std::pair{"direct.tee", &spec.tee}}) {
    auto selection = ParseStreamSelection(launcher.GetString(key), key);
    if (!selection) return selection.error();
    *field = std::move(*selection);
  }
  const std::string& worker_stderr = launcher.GetString("direct.worker_stderr");
  if (worker_stderr != "stdout" && worker_stderr != "stderr") {
    return config::ConfigErrorAt(launcher.OriginOf("direct.worker_stderr"),
                                 "direct.worker_stderr must be stdout or stderr, not '" + worker_stderr + "'",
                                 "stdout: one console in order; stderr: the workers' stderr lines on the agent's stderr");
  }
  spec.stderr_to_stderr = worker_stderr == "stderr";
  spec.run_id = launcher.GetString("direct.run_id");
  spec.role = launcher.GetString("direct.role");
  const std::string& omp = launcher.GetString("direct.omp_num_threads");
  if (omp == "torchrun") {
    spec.omp_threads = LaunchSpec::OmpThreads::kTorchrun;
  } else if (omp != "share") {
    return config::ConfigErrorAt(launcher.OriginOf("direct.omp_num_threads"),
                                 "direct.omp_num_threads must be share or torchrun, not '" + omp + "'",
                                 "share: usable CPUs / workers per node; torchrun: 1 when several workers run on a node");
  }

  const config::Value* env = launcher.effective().Find("direct.env");
  if (env != nullptr && env->IsMap()) {
    for (const auto& [name, value] : env->AsMap()) {
      auto& target = platform::SetExplicitly(value.origin()) ? spec.env_overrides : spec.env;
      target[name] = value.AsString();
    }
  }
  return spec;
}

}  // namespace primus::agent
