#include "benchmark/comm_worker.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "benchmark/comm_benchmark.h"
#include "benchmark/comm_request.h"
#include "benchmark/progress_file.h"
#include "benchmark/rank_groups.h"
#include "util/files.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

Result<int> IntegerVariable(const std::map<std::string, std::string>& env, const std::string& name, int lowest) {
  auto found = env.find(name);
  if (found == env.end()) {
    return UnavailableError(name + " is not set: benchmark workers run under the node agent",
                            "run `primus-cli [direct ...] -- benchmark comm ...`, not the worker directly");
  }
  auto value = ParseInt(found->second);
  if (!value || *value < lowest) return UnavailableError(name + " is '" + found->second + "', not a number >= " + std::to_string(lowest));
  return static_cast<int>(*value);
}

// "rank|pid|host|device index|bus|name": one rank's "Using devices" entry in the store.
std::string EncodeRankLine(const RankLine& line) {
  return fmt::format("{}|{}|{}|{}|{}|{}", line.rank, line.pid, line.host, line.device.index, line.device.bus, line.device.name);
}

RankLine DecodeRankLine(const std::string& text) {
  std::vector<std::string> parts = Split(text, '|');
  RankLine line;
  if (parts.size() < 6) return line;
  line.rank = static_cast<int>(ParseInt(parts[0]).value_or(0));
  line.pid = static_cast<int>(ParseInt(parts[1]).value_or(0));
  line.host = parts[2];
  line.device.index = static_cast<int>(ParseInt(parts[3]).value_or(-1));
  line.device.bus = parts[4];
  std::vector<std::string> rest(parts.begin() + 5, parts.end());
  line.device.name = Join(rest, "|");
  return line;
}

using OptionKind = OptionSpec::Kind;

const std::vector<OptionSpec>& WorkerOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--report-file"}, OptionKind::kValue, "FILE", "", "rank 0 writes the JSON report here"},
      {{"--progress-file"}, OptionKind::kValue, "FILE", "", "rank 0 writes where it stands here (progress_file.h)"},
  };
  return table;
}

}  // namespace

std::vector<std::string> CommWorkerArgs(const std::string& report_file, const std::string& progress_file,
                                        const std::vector<std::string>& user_args) {
  std::vector<std::string> args;
  if (!report_file.empty()) args = {"--report-file", report_file};
  if (!progress_file.empty()) args.insert(args.end(), {"--progress-file", progress_file});
  args.push_back("--");
  args.insert(args.end(), user_args.begin(), user_args.end());
  return args;
}

Result<WorkerRendezvous> ReadWorkerRendezvous(const std::map<std::string, std::string>& env) {
  WorkerRendezvous worker;
  auto rank = IntegerVariable(env, "RANK", 0);
  if (!rank.ok()) return rank.error();
  auto world = IntegerVariable(env, "WORLD_SIZE", 1);
  if (!world.ok()) return world.error();
  auto local = IntegerVariable(env, "LOCAL_RANK", 0);
  if (!local.ok()) return local.error();
  auto port = IntegerVariable(env, "MASTER_PORT", 1);
  if (!port.ok()) return port.error();
  auto addr = env.find("MASTER_ADDR");
  if (addr == env.end() || addr->second.empty()) return UnavailableError("MASTER_ADDR is not set: benchmark workers run under the node agent");
  if (*rank >= *world) return UnavailableError(fmt::format("RANK {} is not below WORLD_SIZE {}", *rank, *world));
  worker.rank = *rank;
  worker.world_size = *world;
  worker.local_rank = *local;
  worker.master_port = *port;
  worker.master_addr = addr->second;
  worker.host = log::HostName();
  return worker;
}

double RendezvousTimeout(const std::map<std::string, std::string>& env) {
  auto found = env.find("PRIMUS_BENCHMARK_TIMEOUT");
  if (found != env.end()) {
    auto value = ParseDouble(found->second);
    if (value && *value > 0) return *value;
  }
  return 300;
}

int RunCommWorker(const std::vector<std::string>& worker_args, const CommBackendFactory& factory) {
  std::map<std::string, std::string> process_env = ProcessEnvironment();
  int rank = -1;
  auto fail = [&](const Error& error) {
    log::Error("{}{}", rank >= 0 ? fmt::format("rank {}: ", rank) : "", error.message);
    if (!error.hint.empty()) log::Error("hint: {}", error.hint);
    return static_cast<int>(error.code);
  };
  auto options = ParseOptions(worker_args, 0, {&WorkerOptions()}, UnknownOptionPolicy::kReject, "the benchmark comm worker");
  if (!options.ok()) return fail(options.error());
  if (!options->stopped_at_separator) {
    return fail(UsageError("the benchmark comm worker takes [--report-file FILE] [--progress-file FILE] -- ARGS",
                           "workers are started by `benchmark comm`, not by hand"));
  }
  std::string report_file, progress_file;
  for (const ParsedOption& option : options->options) {
    (option.spec->names.front() == "--report-file" ? report_file : progress_file) = option.value;
  }
  std::vector<std::string> args(worker_args.begin() + static_cast<long>(options->next), worker_args.end());
  auto request = ParseCommRequest(args);
  if (!request.ok()) return fail(request.error());
  auto env = ReadWorkerRendezvous(process_env);
  if (!env.ok()) return fail(env.error());
  rank = env->rank;
  double timeout = RendezvousTimeout(process_env);

  // Rank 0 serves the store before connecting to it like everyone else.
  std::unique_ptr<StoreServer> server;
  if (env->rank == 0) {
    auto started = StoreServer::Start(env->master_port);
    if (!started.ok()) return fail(started.error());
    server = std::move(*started);
  }
  auto store = StoreClient::Connect(env->rank == 0 ? "127.0.0.1" : env->master_addr, env->master_port, timeout);
  if (!store.ok()) return fail(store.error());

  // --stride: this rank's group runs the benchmark on its own, with its
  // own keys in the store; without it the group is every rank.
  RankGroup group;
  group.rank = env->rank;
  group.size = env->world_size;
  std::optional<StoreClient> group_store;
  if (request->stride > 0) {
    auto strided = StridedGroup(env->rank, env->world_size, request->stride);
    if (!strided.ok()) return fail(strided.error());
    group = *strided;
    auto connected = StoreClient::Connect(env->rank == 0 ? "127.0.0.1" : env->master_addr, env->master_port, timeout);
    if (!connected.ok()) return fail(connected.error());
    group_store = std::move(*connected);
    group_store->SetKeyPrefix(fmt::format("primus/group/{}/", group.index));
  }
  StoreClient& members = group_store ? *group_store : *store;
  WorkerRendezvous group_env = *env;
  group_env.rank = group.rank;
  group_env.world_size = group.size;
  // Groups taking turns wait for each other far longer than a rendezvous.
  const double turn_timeout = request->stride > 0 ? std::max(timeout, 86400.0) : timeout;

  CommWorkerContext worker_context{group_env, members, timeout};
  auto backend = factory(worker_context);
  if (!backend.ok()) return fail(backend.error());

  CommRunRequest context;
  context.rank = group.rank;
  context.nranks = group.size;
  context.backend = (*backend)->Describe();
  RankLine mine{group.rank, static_cast<int>(::getpid()), env->host, (*backend)->Device()};
  if (Status set = members.Set(fmt::format("primus/rank/{}", group.rank), EncodeRankLine(mine)); !set.ok()) {
    return fail(set.error());
  }
  std::ostringstream buffered;  // --parallel-groups: a leader's table, printed in group order
  if (group.rank == 0) {
    for (int r = 0; r < group.size; ++r) {
      auto line = members.Get(fmt::format("primus/rank/{}", r), timeout);
      if (!line.ok()) return fail(line.error());
      context.ranks.push_back(DecodeRankLine(*line));
    }
    if (!request->json) context.out = request->parallel_groups ? static_cast<std::ostream*>(&buffered) : &std::cout;
  }
  if (env->rank == 0 && !progress_file.empty()) {
    context.progress = [&progress_file](long done, long total, const std::string& detail) {
      WriteProgressFile(progress_file, done, total, detail);
    };
  }
  if (auto corrupt = process_env.find("PRIMUS_BENCHMARK_CORRUPT_RANK"); corrupt != process_env.end()) {
    context.corrupt_rank = static_cast<int>(ParseInt(corrupt->second).value_or(-1));
  }
  if (request->stride > 0 && !request->parallel_groups && group.index > 0) {
    auto turn = store->Get(fmt::format("primus/group-done/{}", group.index - 1), turn_timeout);
    if (!turn.ok()) return fail(turn.error());
  }
  if (request->stride > 0 && context.out != nullptr) {
    *context.out << fmt::format("# Group {} of {} (--stride {}): ranks {}, numbered 0 to {} in this table\n", group.index,
                                group.count, request->stride, MemberList(group), group.size - 1);
  }

  auto sections = RunCommBenchmark(**backend, *request, context);
  if (!sections.ok()) return fail(sections.error());
  if (request->stride > 0 && group.rank == 0) {
    if (request->parallel_groups) {
      if (group.index > 0) {
        auto turn = store->Get(fmt::format("primus/group-printed/{}", group.index - 1), turn_timeout);
        if (!turn.ok()) return fail(turn.error());
      }
      std::cout << buffered.str() << std::flush;
      if (Status set = store->Set(fmt::format("primus/group-printed/{}", group.index), "1"); !set.ok()) return fail(set.error());
    } else {
      std::cout << std::flush;
      if (Status set = store->Set(fmt::format("primus/group-done/{}", group.index), "1"); !set.ok()) return fail(set.error());
    }
  }
  int64_t errors = 0;
  std::vector<int64_t> wrong_by_rank(static_cast<size_t>(group.size), 0);
  for (const CommSection& section : *sections) {
    errors += section.errors;
    for (size_t r = 0; r < section.wrong_by_rank.size() && r < wrong_by_rank.size(); ++r) {
      wrong_by_rank[r] += section.wrong_by_rank[r];
    }
  }

  if (env->rank == 0) {
    std::cout << std::flush;
    if (!report_file.empty()) {
      std::string report = CommReportJson(context.backend, *request, context.ranks, *sections).dump(2) + "\n";
      if (Status written = WriteFileAtomic(report_file, report); !written.ok()) return fail(written.error());
    }
  }
  // Leave together, after rank 0's output is complete (a rank that exits
  // early with an error would make the agent stop rank 0 mid-report), and
  // with rank 0's store serving until the last rank's request.
  if (env->rank == 0) {
    if (Status set = store->Set("primus/reported", "1"); !set.ok()) return fail(set.error());
  } else if (auto reported = store->Get("primus/reported", timeout); !reported.ok()) {
    return fail(reported.error());
  }
  if (Status set = store->Set(fmt::format("primus/done/{}", env->rank), "1"); !set.ok()) return fail(set.error());
  if (env->rank == 0) {
    for (int r = 0; r < env->world_size; ++r) {
      auto done = store->Get(fmt::format("primus/done/{}", r), turn_timeout);
      if (!done.ok()) return fail(done.error());
    }
  }
  if (errors > 0) {
    std::vector<std::string> wrong_ranks;
    for (size_t r = 0; r < wrong_by_rank.size(); ++r) {
      int global = request->stride > 0 ? group.members[r] : static_cast<int>(r);
      if (wrong_by_rank[r] > 0) wrong_ranks.push_back(fmt::format("rank {} ({} elements)", global, wrong_by_rank[r]));
    }
    log::Error("rank {}: the result checks failed on {}: exit 1", env->rank, Join(wrong_ranks, ", "));
    return 1;
  }
  return 0;
}

}  // namespace primus::benchmark
