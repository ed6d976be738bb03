// primus-agent-driver: a minimal command line over RunWorkers, for tests and
// benches until `primus-cli direct ... -- run CMD` calls the agent itself.
// Flags map one to one onto LaunchSpec fields; --result-json writes the
// RunResult for tests to inspect.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "agent/run_workers.h"
#include "util/files.h"
#include "util/strings.h"

namespace {

using primus::agent::LaunchSpec;

int Usage(const std::string& problem) {
  std::fprintf(stderr,
               "primus-agent-driver: %s\n"
               "usage: primus-agent-driver [--nproc-per-node N] [--nnodes N] [--node-rank R]\n"
               "  [--master-addr A] [--master-port P] [--log-dir D] [--run-id ID] [--max-restarts N]\n"
               "  [--restart-backoff S] [--term-timeout S] [--hang-timeout S] [--ranks-filter 0,1]\n"
               "  [--console-prefix T] [--role R] [--env K=V]... [--result-json FILE] -- CMD [ARGS]\n",
               problem.c_str());
  return 2;
}

nlohmann::json FailureJson(const primus::agent::WorkerFailure& failure) {
  return {{"host", failure.host},         {"rank", failure.rank},
          {"local_rank", failure.local_rank}, {"pid", failure.pid},
          {"attempt", failure.attempt},   {"exit_code", failure.exit_code},
          {"signal", failure.signal},     {"hung", failure.hung},
          {"timestamp", failure.timestamp}, {"log_file", failure.log_file},
          {"error_file", failure.error_file}, {"message", failure.message}};
}

}  // namespace

int main(int argc, char** argv) {
  LaunchSpec spec;
  std::string result_json;
  int i = 1;
  for (; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return Usage("flag " + flag + " needs a value");
    std::string value = argv[++i];
    auto number = [&](int* out) {
      auto parsed = primus::ParseInt(value);
      if (!parsed) return false;
      *out = static_cast<int>(*parsed);
      return true;
    };
    auto seconds = [&](double* out) {
      auto parsed = primus::ParseDouble(value);
      if (!parsed) return false;
      *out = *parsed;
      return true;
    };
    bool ok = true;
    if (flag == "--nproc-per-node") ok = number(&spec.nproc_per_node);
    else if (flag == "--nnodes") ok = number(&spec.nnodes);
    else if (flag == "--node-rank") ok = number(&spec.node_rank);
    else if (flag == "--master-addr") spec.master_addr = value;
    else if (flag == "--master-port") ok = number(&spec.master_port);
    else if (flag == "--log-dir") spec.log_dir = value;
    else if (flag == "--run-id") spec.run_id = value;
    else if (flag == "--max-restarts") ok = number(&spec.max_restarts);
    else if (flag == "--restart-backoff") ok = seconds(&spec.restart_backoff_s);
    else if (flag == "--term-timeout") ok = seconds(&spec.term_timeout_s);
    else if (flag == "--hang-timeout") ok = seconds(&spec.hang_timeout_s);
    else if (flag == "--console-prefix") spec.console_prefix = value;
    else if (flag == "--role") spec.role = value;
    else if (flag == "--result-json") result_json = value;
    else if (flag == "--ranks-filter") {
      for (const std::string& part : primus::Split(value, ',')) {
        auto rank = primus::ParseInt(part);
        if (!rank) return Usage("bad rank '" + part + "' in --ranks-filter");
        spec.ranks_filter.push_back(static_cast<int>(*rank));
      }
    } else if (flag == "--env") {
      size_t equals = value.find('=');
      if (equals == std::string::npos) return Usage("--env needs K=V");
      spec.env[value.substr(0, equals)] = value.substr(equals + 1);
    } else {
      return Usage("unknown flag " + flag);
    }
    if (!ok) return Usage("bad value '" + value + "' for " + flag);
  }
  for (; i < argc; ++i) spec.argv.push_back(argv[i]);

  auto result = primus::agent::RunWorkers(spec);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.error().Format().c_str());
    return static_cast<int>(result.error().code);
  }
  if (!result_json.empty()) {
    nlohmann::json json = {{"exit_code", result->exit_code},     {"log_dir", result->log_dir},
                           {"restarts", result->restarts},       {"run_id", result->run_id},
                           {"master_addr", result->master_addr}, {"master_port", result->master_port},
                           {"agent_signal", result->agent_signal}};
    if (result->root_cause) json["root_cause"] = FailureJson(*result->root_cause);
    json["other_failures"] = nlohmann::json::array();
    for (const auto& failure : result->other_failures) json["other_failures"].push_back(FailureJson(failure));
    (void)primus::WriteFileAtomic(result_json, json.dump(2) + "\n");
  }
  return result->exit_code;
}
