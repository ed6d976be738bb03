#include "cli/torchrun_command.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "agent/rank_list.h"
#include "agent/stream_selection.h"
#include "runtime/runtime.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

using Level = TorchrunNote::Level;

enum class Arg {
  kNnodes,
  kNprocPerNode,
  kRdzvBackend,
  kRdzvEndpoint,
  kRdzvId,
  kRdzvConf,
  kStandalone,
  kMaxRestarts,
  kMonitorInterval,
  kStartMethod,
  kEventLogHandler,
  kRole,
  kModule,
  kNoPython,
  kRunPath,
  kLogDir,
  kRedirects,
  kTee,
  kLocalRanksFilter,
  kNodeRank,
  kMasterAddr,
  kMasterPort,
  kLocalAddr,
  kLogsSpecs,
  kNumaBinding,
  kSignalsToHandle,
  kShutdownTimeout,
  kVirtualLocalRank,
  kDuplicateStdoutFilters,
  kDuplicateStderrFilters,
  kHelp,
};

// torchrun's flags as torch.distributed.run declares them: every spelling,
// whether it takes a value, and the PET_* variable that stands in for it
// when it is not given (argparse's dest in capitals; none for --logs-specs
// and --numa-binding).
struct TorchrunFlag {
  Arg arg;
  std::vector<std::string> names;
  bool takes_value;
  std::string env;
};

const std::vector<TorchrunFlag>& Flags() {
  static const std::vector<TorchrunFlag> flags = {
      {Arg::kNnodes, {"--nnodes"}, true, "PET_NNODES"},
      {Arg::kNprocPerNode, {"--nproc-per-node", "--nproc_per_node"}, true, "PET_NPROC_PER_NODE"},
      {Arg::kRdzvBackend, {"--rdzv-backend", "--rdzv_backend"}, true, "PET_RDZV_BACKEND"},
      {Arg::kRdzvEndpoint, {"--rdzv-endpoint", "--rdzv_endpoint"}, true, "PET_RDZV_ENDPOINT"},
      {Arg::kRdzvId, {"--rdzv-id", "--rdzv_id"}, true, "PET_RDZV_ID"},
      {Arg::kRdzvConf, {"--rdzv-conf", "--rdzv_conf"}, true, "PET_RDZV_CONF"},
      {Arg::kStandalone, {"--standalone"}, false, "PET_STANDALONE"},
      {Arg::kMaxRestarts, {"--max-restarts", "--max_restarts"}, true, "PET_MAX_RESTARTS"},
      {Arg::kMonitorInterval, {"--monitor-interval", "--monitor_interval"}, true, "PET_MONITOR_INTERVAL"},
      {Arg::kStartMethod, {"--start-method", "--start_method"}, true, "PET_START_METHOD"},
      {Arg::kEventLogHandler, {"--event-log-handler", "--event_log_handler"}, true, "PET_EVENT_LOG_HANDLER"},
      {Arg::kRole, {"--role"}, true, "PET_ROLE"},
      {Arg::kModule, {"-m", "--module"}, false, "PET_MODULE"},
      {Arg::kNoPython, {"--no-python", "--no_python"}, false, "PET_NO_PYTHON"},
      {Arg::kRunPath, {"--run-path", "--run_path"}, false, "PET_RUN_PATH"},
      {Arg::kLogDir, {"--log-dir", "--log_dir"}, true, "PET_LOG_DIR"},
      {Arg::kRedirects, {"-r", "--redirects"}, true, "PET_REDIRECTS"},
      {Arg::kTee, {"-t", "--tee"}, true, "PET_TEE"},
      {Arg::kLocalRanksFilter, {"--local-ranks-filter", "--local_ranks_filter"}, true, "PET_LOCAL_RANKS_FILTER"},
      {Arg::kNodeRank, {"--node-rank", "--node_rank"}, true, "PET_NODE_RANK"},
      {Arg::kMasterAddr, {"--master-addr", "--master_addr"}, true, "PET_MASTER_ADDR"},
      {Arg::kMasterPort, {"--master-port", "--master_port"}, true, "PET_MASTER_PORT"},
      {Arg::kLocalAddr, {"--local-addr", "--local_addr"}, true, "PET_LOCAL_ADDR"},
      {Arg::kLogsSpecs, {"--logs-specs", "--logs_specs"}, true, ""},
      {Arg::kNumaBinding, {"--numa-binding", "--numa_binding"}, true, ""},
      {Arg::kSignalsToHandle, {"--signals-to-handle", "--signals_to_handle"}, true, "PET_SIGNALS_TO_HANDLE"},
      {Arg::kShutdownTimeout, {"--shutdown-timeout", "--shutdown_timeout"}, true, "PET_SHUTDOWN_TIMEOUT"},
      {Arg::kVirtualLocalRank, {"--virtual-local-rank", "--virtual_local_rank"}, false, "PET_VIRTUAL_LOCAL_RANK"},
      {Arg::kDuplicateStdoutFilters, {"--duplicate-stdout-filters", "--duplicate_stdout_filters"}, true,
       "PET_DUPLICATE_STDOUT_FILTERS"},
      {Arg::kDuplicateStderrFilters, {"--duplicate-stderr-filters", "--duplicate_stderr_filters"}, true,
       "PET_DUPLICATE_STDERR_FILTERS"},
      {Arg::kHelp, {"-h", "--help"}, false, ""},
  };
  return flags;
}

// One value, and where it came from: the flag as written, or its PET_* variable.
struct Given {
  std::string value;
  std::string source;
  bool from_env = false;
};

const std::string kUsage = "usage: torchrun [options] training_script [training_script_args ...]";
const std::string kHelpHint = "torchrun --help lists every flag and what it does here (docs/torchrun.md)";

Error Usage(const std::string& message, std::string hint = "") {
  return UsageError(message, hint.empty() ? kHelpHint : std::move(hint));
}

std::vector<std::string> AllLongNames() {
  std::vector<std::string> names;
  for (const TorchrunFlag& flag : Flags()) {
    for (const std::string& name : flag.names) {
      if (name.starts_with("--")) names.push_back(name);
    }
  }
  return names;
}

const TorchrunFlag* FindExact(std::string_view name) {
  for (const TorchrunFlag& flag : Flags()) {
    if (std::find(flag.names.begin(), flag.names.end(), name) != flag.names.end()) return &flag;
  }
  return nullptr;
}

const OptionSpec* FindOurs(std::string_view name) {
  for (const OptionSpec& spec : runtime::GlobalOptions()) {
    if (spec.names.front() == "--help") continue;  // torchrun's own -h/--help
    if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
  }
  return nullptr;
}

// argparse accepts a unique prefix of a long flag (--nproc for --nproc-per-node).
Result<const TorchrunFlag*> FindAbbreviated(const std::string& name) {
  std::set<const TorchrunFlag*> matches;
  std::vector<std::string> spelled;
  for (const TorchrunFlag& flag : Flags()) {
    for (const std::string& candidate : flag.names) {
      if (candidate.starts_with("--") && candidate.starts_with(name)) {
        if (matches.insert(&flag).second) spelled.push_back(candidate);
      }
    }
  }
  if (matches.size() == 1) return *matches.begin();
  if (matches.size() > 1) {
    return Usage("ambiguous torchrun option " + name + ": it could be " + Join(spelled, ", "),
                 "write the whole flag");
  }
  std::vector<std::string> ours;
  for (const OptionSpec& spec : runtime::GlobalOptions()) ours.push_back(spec.names.front());
  std::vector<std::string> candidates = AllLongNames();
  candidates.insert(candidates.end(), ours.begin(), ours.end());
  return Usage("unrecognized torchrun option " + name + DidYouMean(name, candidates),
               "torchrun's options come before the training script (everything after it is the script's); " +
                   kHelpHint);
}

std::optional<int64_t> Integer(std::string_view text) { return ParseInt(Trim(text)); }

Result<int> NonNegative(const Given& given, const std::string& what, int64_t max) {
  std::optional<int64_t> value = Integer(given.value);
  if (!value) return Usage(given.source + " '" + given.value + "': expected an integer (" + what + ")");
  if (*value < 0 || *value > max) {
    return Usage(given.source + " " + given.value + ": " + what + " must be from 0 to " + std::to_string(max));
  }
  return static_cast<int>(*value);
}

// HOST[:PORT] or [IPV6]:PORT; `default_port` -1 when a port is required.
struct Endpoint {
  std::string host;
  int port = -1;
};

Result<Endpoint> ParseEndpoint(const Given& given, int default_port) {
  std::string text(Trim(given.value));
  Endpoint endpoint;
  std::string port_text;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string::npos) return Usage(given.source + " '" + given.value + "': no closing ']'");
    endpoint.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return Usage(given.source + " '" + given.value + "': expected HOST:PORT");
      port_text = text.substr(close + 2);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    endpoint.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  } else {
    endpoint.host = text;  // a host name, or an IPv6 address without a port
  }
  if (endpoint.host.empty()) return Usage(given.source + " '" + given.value + "': no host", "write HOST:PORT");
  if (port_text.empty()) {
    if (default_port < 0) {
      return Usage(given.source + " '" + given.value + "': the port is missing", "write HOST:PORT");
    }
    endpoint.port = default_port;
    return endpoint;
  }
  std::optional<int64_t> port = Integer(port_text);
  if (!port || *port < 0 || *port > 65535) {
    return Usage(given.source + " '" + given.value + "': '" + port_text + "' is not a port (0 to 65535)");
  }
  endpoint.port = static_cast<int>(*port);
  return endpoint;
}

bool SafeRunId(std::string_view id) {
  if (id.empty() || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

// The signal names torchrun's --signals-to-handle takes (SIGTERM, ...).
std::optional<int> SignalNumber(std::string_view name) {
  if (!name.starts_with("SIG")) return std::nullopt;
  for (int number = 1; number < NSIG; ++number) {
    const char* abbreviation = sigabbrev_np(number);
    if (abbreviation != nullptr && name.substr(3) == abbreviation) return number;
  }
  return std::nullopt;
}

// Runs the script given as the first argument in a fresh interpreter, as
// torchrun's --run-path runs it in its worker process (runpy.run_path).
constexpr const char* kRunPathCode =
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')";

class Reader {
 public:
  explicit Reader(const TorchrunRequest& inputs) : inputs_(inputs) {}

  Result<TorchrunCommand> Read() {
    if (Status status = ReadArguments(); !status) return status.error();
    if (command_.help || command_.version) return command_;
    if (Status status = ReadEnvironment(); !status) return status.error();
    for (auto step : {&Reader::Layout, &Reader::Rendezvous, &Reader::Worker, &Reader::Logs, &Reader::Restarts,
                      &Reader::Internals}) {
      if (Status status = (this->*step)(); !status) return status.error();
    }
    return command_;
  }

 private:
  // The flags up to the training script; the script and everything after it
  // are the script's (argparse's REMAINDER). A later flag wins over an earlier.
  Status ReadArguments() {
    const std::vector<std::string>& args = inputs_.args;
    size_t i = 0;
    while (i < args.size()) {
      const std::string& token = args[i];
      if (token == "--") {
        ++i;
        break;
      }
      if (token.size() < 2 || token[0] != '-') break;
      std::string name = token, value;
      bool has_value = false;
      if (token.starts_with("--")) {
        size_t equals = token.find('=');
        if (equals != std::string::npos) {
          name = token.substr(0, equals);
          value = token.substr(equals + 1);
          has_value = true;
        }
      } else if (token.size() > 2) {  // -r3, -t0:1
        name = token.substr(0, 2);
        value = token.substr(2);
        has_value = true;
      }
      if (const OptionSpec* ours = FindOurs(name)) {
        // Ours among torchrun's: --dry-run, --debug, --config F, --set K=V ...
        if (ours->names.front() == "--version") {
          command_.version = true;
          return Status::Ok();
        }
        command_.our_options.push_back(token);
        if (ours->kind != OptionSpec::Kind::kFlag && !has_value) {
          if (i + 1 >= args.size()) return Usage(name + " expects a value (" + ours->value_name + ")");
          command_.our_options.push_back(args[++i]);
        }
        ++i;
        continue;
      }
      const TorchrunFlag* flag = FindExact(name);
      if (flag == nullptr && name.starts_with("--")) {
        auto abbreviated = FindAbbreviated(name);
        if (!abbreviated.ok()) return abbreviated.error();
        flag = *abbreviated;
      }
      if (flag == nullptr) {
        return Usage("unrecognized torchrun option " + token + DidYouMean(name, {"-m", "-r", "-t", "-h", "-q"}),
                     "torchrun's options come before the training script; " + kHelpHint);
      }
      if (flag->arg == Arg::kHelp) {
        command_.help = true;
        return Status::Ok();
      }
      if (flag->takes_value) {
        if (!has_value) {
          if (i + 1 >= args.size()) return Usage(token + " expects a value", kUsage);
          value = args[++i];
        }
      } else if (has_value) {
        return Usage(name + " takes no value (got '" + value + "')");
      } else {
        value = "1";
      }
      given_[flag->arg] = Given{value, name, false};
      ++i;
    }
    if (i >= args.size()) {
      return Usage("torchrun needs a training script (and its arguments)", kUsage);
    }
    script_ = args[i];
    script_args_.assign(args.begin() + static_cast<long>(i) + 1, args.end());
    return Status::Ok();
  }

  // PET_<FLAG> stands in for a flag that was not given; an empty one counts as unset.
  Status ReadEnvironment() {
    for (const TorchrunFlag& flag : Flags()) {
      if (flag.env.empty() || given_.count(flag.arg) > 0) continue;
      std::optional<std::string> value = Lookup(inputs_.environment, flag.env);
      if (!value || value->empty()) continue;
      if (!flag.takes_value) {  // torchrun: bool(int(value))
        std::optional<int64_t> number = Integer(*value);
        if (!number) return Usage(flag.env + "=" + *value + ": expected 0 or 1 (" + flag.names.back() + ")");
        if (*number == 0) continue;
        *value = "1";
      }
      given_[flag.arg] = Given{*value, flag.env, true};
    }
    return Status::Ok();
  }

  const Given* Get(Arg arg) const {
    auto found = given_.find(arg);
    return found == given_.end() ? nullptr : &found->second;
  }
  bool On(Arg arg) const { return Get(arg) != nullptr; }

  void Set(const std::string& key, const std::string& value, const Given& from) {
    config::FlagSetting setting{key, {value}, from.source};
    setting.from_environment = from.from_env;
    command_.settings.push_back(std::move(setting));
  }
  void Default(const std::string& key, const std::string& value) {
    command_.defaults.push_back(config::FlagSetting{key, {value}, "torchrun"});
  }
  void Note(Level level, std::string text) { command_.notes.push_back({level, std::move(text)}); }

  // --nnodes, --nproc-per-node, --node-rank.
  Status Layout() {
    if (const Given* nnodes = Get(Arg::kNnodes)) {
      std::vector<std::string> parts = Split(Trim(nnodes->value), ':');
      std::optional<int64_t> low = parts.size() <= 2 ? Integer(parts[0]) : std::nullopt;
      std::optional<int64_t> high = parts.size() == 2 ? Integer(parts[1]) : low;
      if (!low || !high) {
        return Usage(nnodes->source + " '" + nnodes->value + "': expected a node count N or a range MIN:MAX");
      }
      if (*low < 1 || *low > *high || *high > (1 << 18)) {
        return Usage(nnodes->source + " " + nnodes->value + ": needs 0 < MIN <= MAX <= 262144");
      }
      nnodes_ = static_cast<int>(*high);
      min_nnodes_ = static_cast<int>(*low);
      Set("direct.nnodes", std::to_string(nnodes_), *nnodes);
      if (min_nnodes_ != nnodes_) Set("direct.min_nnodes", std::to_string(min_nnodes_), *nnodes);
    }
    if (const Given* nproc = Get(Arg::kNprocPerNode)) {
      std::string value = ToLower(Trim(nproc->value));
      if (value == "xpu") {
        return Usage(nproc->source + " xpu: Intel XPUs are not supported yet",
                     "give a number of workers, or auto/gpu (one per visible GPU) or cpu (one per CPU)");
      }
      std::optional<int64_t> number = Integer(value);
      if (value != "auto" && value != "gpu" && value != "cpu" && (!number || *number < 1 || *number > 4096)) {
        return Usage(nproc->source + " '" + nproc->value + "': unsupported nproc_per_node value",
                     "give a number of workers (1 to 4096), auto, gpu or cpu");
      }
      Set("direct.nproc_per_node", value, *nproc);
      if (value == "auto") {
        Note(Level::kPlan, nproc->source + " auto: one worker per visible GPU, at least 1 (torchrun starts one per CPU "
                               "when there is no GPU; write cpu for that)");
      }
    } else {
      Default("direct.nproc_per_node", "1");
    }
    if (const Given* rank = Get(Arg::kNodeRank)) {
      auto value = NonNegative(*rank, "the node rank", (1 << 18) - 1);
      if (!value.ok()) return value.error();
      if (*value >= nnodes_) {
        return Usage(rank->source + " " + rank->value + " with " + std::to_string(nnodes_) + " node" +
                         (nnodes_ == 1 ? "" : "s") + ": the node rank must be from 0 to " + std::to_string(nnodes_ - 1),
                     "give --nnodes N and --node-rank 0..N-1 on each node");
      }
      node_rank_given_ = true;
      Set("direct.node_rank", std::to_string(*value), *rank);
    }
    return Status::Ok();
  }

  // --rdzv-backend, --rdzv-endpoint, --rdzv-id, --rdzv-conf, --standalone,
  // --master-addr, --master-port, --local-addr: onto nnodes, node rank,
  // master address and port (node 0's control channel is master port + 1).
  Status Rendezvous() {
    std::string backend = "static";
    const Given* backend_given = Get(Arg::kRdzvBackend);
    if (backend_given != nullptr) backend = ToLower(Trim(backend_given->value));
    const Given* endpoint_given = Get(Arg::kRdzvEndpoint);
    const Given* master_addr = Get(Arg::kMasterAddr);
    const Given* master_port = Get(Arg::kMasterPort);

    if (On(Arg::kStandalone)) {
      if (nnodes_ > 1) {
        return Usage("--standalone runs a single node, but --nnodes asks for " + std::to_string(nnodes_),
                     "drop --standalone for a multi-node job, or --nnodes for a single node");
      }
      std::vector<std::string> ignored;
      for (Arg arg : {Arg::kRdzvBackend, Arg::kRdzvEndpoint, Arg::kRdzvId, Arg::kMasterAddr, Arg::kMasterPort}) {
        if (const Given* given = Get(arg)) ignored.push_back(given->source);
      }
      if (!ignored.empty()) {
        Note(Level::kWarn, "--standalone: " + Join(ignored, ", ") + " ignored, as torchrun ignores them");
      }
      // Over any PET_MASTER_* the configuration would read as well.
      const Given& standalone = *Get(Arg::kStandalone);
      Set("direct.master_addr", "127.0.0.1", standalone);
      Set("direct.master_port", "0", standalone);
      Note(Level::kPlan, "rendezvous: --standalone, one node; MASTER_ADDR 127.0.0.1 and a free MASTER_PORT, "
                         "TORCHELASTIC_RUN_ID generated");
      return Status::Ok();
    }
    if (const Given* id = Get(Arg::kRdzvId)) {
      if (!SafeRunId(Trim(id->value))) {
        return Usage(id->source + " '" + id->value + "': here the run id names the log directory, so it may only use "
                         "letters, digits, '-', '_' and '.'",
                     "pick such an id (a job id is one), or leave " + id->source + " out to have one generated");
      }
      run_id_ = std::string(Trim(id->value));
      Set("direct.run_id", run_id_, *id);
    }
    if (backend != "static" && backend != "c10d" && backend != "etcd" && backend != "etcd-v2") {
      return Usage(backend_given->source + " '" + backend_given->value + "': unknown rendezvous backend",
                   "torchrun's backends are static (the default), c10d, etcd and etcd-v2");
    }
    if (const Given* conf = Get(Arg::kRdzvConf)) {
      if (Status status = RendezvousConf(*conf); !status) return status;
    }
    if (const Given* local_addr = Get(Arg::kLocalAddr); local_addr != nullptr && backend != "etcd" &&
                                                          backend != "etcd-v2") {
      Note(Level::kDebug, local_addr->source + " " + local_addr->value +
                              ": not needed; the workers' MASTER_ADDR is the rendezvous host as given");
    }

    bool elastic = min_nnodes_ != nnodes_;
    if (backend == "static" && elastic) {
      const Given* nnodes = Get(Arg::kNnodes);
      return Usage(nnodes->source + " " + nnodes->value + " is an elastic job, but the static rendezvous gives every "
                       "node a fixed rank",
                   "add --rdzv-backend c10d --rdzv-endpoint HOST:PORT (the same on every node; HOST runs the "
                   "rendezvous), as with torchrun");
    }
    if (backend == "static") {
      if (endpoint_given != nullptr) {
        // torchrun's static rendezvous takes its endpoint over --master-addr/--master-port.
        auto endpoint = ParseEndpoint(*endpoint_given, -1);
        if (!endpoint.ok()) return endpoint.error();
        Set("direct.master_addr", endpoint->host, *endpoint_given);
        Set("direct.master_port", std::to_string(endpoint->port), *endpoint_given);
        return Status::Ok();
      }
      if (master_addr != nullptr) {
        if (Trim(master_addr->value).empty()) return Usage(master_addr->source + ": the address is empty");
        Set("direct.master_addr", std::string(Trim(master_addr->value)), *master_addr);
      } else if (nnodes_ > 1) {
        Default("direct.master_addr", "127.0.0.1");
      }
      if (master_port != nullptr) {
        auto port = NonNegative(*master_port, "a port", 65535);
        if (!port.ok()) return port.error();
        if (*port == 0 && nnodes_ > 1) {
          return Usage(master_port->source + " 0: the other nodes cannot find a port chosen at random",
                       "give the same --master-port on every node");
        }
        Set("direct.master_port", std::to_string(*port), *master_port);
      } else if (nnodes_ > 1) {
        Default("direct.master_port", "29500");
      } else {
        Note(Level::kPlan, "rendezvous: MASTER_PORT is a free port (torchrun's default is 29500, which a second job on "
                           "this host would collide with); pass --master-port 29500 for torchrun's");
      }
      return Status::Ok();
    }

    // c10d and etcd: the endpoint hosts the rendezvous (c10d) or names the etcd server.
    if (endpoint_given == nullptr) {
      return Usage(backend_given->source + " " + backend + " needs --rdzv-endpoint HOST[:PORT]",
                   backend == "c10d" ? "give a host that runs one of the nodes and a port, e.g. --rdzv-endpoint "
                                       "node0:29400"
                                     : "give the etcd server, e.g. --rdzv-endpoint etcd0:2379");
    }
    if (backend == "etcd" || backend == "etcd-v2") return EtcdRendezvous(*backend_given, *endpoint_given);
    auto endpoint = ParseEndpoint(*endpoint_given, 29400);
    if (!endpoint.ok()) return endpoint.error();
    if (nnodes_ > 1 && endpoint->port == 0) {
      return Usage(endpoint_given->source + " " + endpoint_given->value +
                       ": port 0 is chosen at random, so the other nodes cannot find it",
                   "give a port, e.g. " + endpoint->host + ":29400");
    }
    for (const Given* ignored : {master_addr, master_port}) {
      if (ignored != nullptr) {
        Note(Level::kWarn, ignored->source + " is ignored with --rdzv-backend c10d (as torchrun ignores it); the "
                                             "rendezvous endpoint " + endpoint_given->value + " is used");
      }
    }
    if (nnodes_ > 1) {
      // torchrun's dynamic rendezvous: the agent on the endpoint's host that
      // binds the port first coordinates, node ranks go to nodes as they
      // join, and rank 0's host publishes a free MASTER_PORT.
      if (const Given* rank = Get(Arg::kNodeRank)) {
        Note(Level::kDebug, rank->source + " " + rank->value + ": not used with c10d, which hands node ranks out as "
                                                                  "nodes join (as torchrun does)");
      }
      Set("direct.rendezvous", "c10d", *backend_given);
      Set("direct.node_rank", "0", *backend_given);
      Set("direct.master_addr", endpoint->host, *endpoint_given);
      Set("direct.master_port", "0", *endpoint_given);
      Set("direct.control_port", std::to_string(endpoint->port), *endpoint_given);
      Note(Level::kPlan, "rendezvous: c10d at " + endpoint->host + ":" + std::to_string(endpoint->port) +
                             "; the agent on that host coordinates, node ranks are handed out as nodes join, " +
                             (elastic ? "the job runs on " + std::to_string(min_nnodes_) + " to " +
                                            std::to_string(nnodes_) + " nodes"
                                      : "the job runs on " + std::to_string(nnodes_) + " nodes") +
                             "; MASTER_ADDR is " + endpoint->host + " and MASTER_PORT a free port there");
      return Status::Ok();
    }
    Set("direct.master_addr", endpoint->host, *endpoint_given);
    Set("direct.master_port", std::to_string(endpoint->port), *endpoint_given);  // 0: a free port
    Note(Level::kPlan, "rendezvous: c10d at " + endpoint->host + ":" +
                           (endpoint->port == 0 ? std::string("a free port") : std::to_string(endpoint->port)) +
                           "; the workers get it as MASTER_ADDR/MASTER_PORT");
    return Status::Ok();
  }

  // etcd / etcd-v2: the etcd server at the endpoint names the coordinator
  // (the first agent to claim the run id); ranks as with c10d.
  Status EtcdRendezvous(const Given& backend, const Given& endpoint_given) {
    auto endpoint = ParseEndpoint(endpoint_given, 2379);
    if (!endpoint.ok()) return endpoint.error();
    if (endpoint->port == 0) {
      return Usage(endpoint_given.source + " " + endpoint_given.value + ": port 0 is not an etcd server's port",
                   "give the etcd server's client port, e.g. " + endpoint->host + ":2379");
    }
    if (nnodes_ == 1) {
      Note(Level::kDebug, backend.source + " " + backend.value + " with one node: no rendezvous needed");
      return Status::Ok();
    }
    if (run_id_.empty()) {
      return Usage(backend.source + " " + backend.value + " needs --rdzv-id: the agents of one job find each other "
                                                           "under it in etcd",
                   "give the same --rdzv-id on every node (a job id is a good one)");
    }
    if (const Given* rank = Get(Arg::kNodeRank)) {
      Note(Level::kDebug, rank->source + " " + rank->value + ": not used with etcd, which hands node ranks out as "
                                                              "nodes join");
    }
    if (const Given* local_addr = Get(Arg::kLocalAddr)) {
      Set("direct.local_addr", std::string(Trim(local_addr->value)), *local_addr);
    }
    Set("direct.rendezvous", "etcd-v2", backend);
    Set("direct.node_rank", "0", backend);
    Set("direct.master_port", "0", endpoint_given);
    Set("direct.rdzv_endpoint", endpoint->host + ":" + std::to_string(endpoint->port), endpoint_given);
    Note(Level::kPlan, "rendezvous: etcd v2 API at " + endpoint->host + ":" + std::to_string(endpoint->port) +
                           " under run id " + run_id_ + "; the first agent to claim it coordinates, node ranks are "
                           "handed out as nodes join");
    return Status::Ok();
  }

  // --rdzv-conf k=v,...: the rendezvous timeouts and the keep-alive settings
  // map onto ours; the others tune torchrun's rendezvous store.
  Status RendezvousConf(const Given& conf) {
    std::optional<double> keep_alive_interval, keep_alive_attempts;
    std::optional<std::string> read_timeout;
    for (const std::string& raw : Split(conf.value, ',')) {
      std::string item(Trim(raw));
      if (item.empty()) continue;
      size_t equals = item.find('=');
      if (equals == std::string::npos || equals == 0) {
        return Usage(conf.source + " '" + conf.value + "': '" + item + "' is not KEY=VALUE",
                     "write --rdzv-conf join_timeout=600,read_timeout=60");
      }
      std::string key(Trim(item.substr(0, equals))), value(Trim(item.substr(equals + 1)));
      auto seconds = [&]() -> Result<double> {
        std::optional<double> number = ParseDouble(value);
        if (!number || !(*number > 0)) {
          return Usage(conf.source + " " + key + "=" + value + ": expected a positive number of seconds");
        }
        return *number;
      };
      if (key == "join_timeout" || key == "timeout") {
        auto timeout = seconds();
        if (!timeout.ok()) return timeout.error();
        Set("direct.join_timeout", value, conf);
      } else if (key == "last_call_timeout" || key == "close_timeout") {
        // last call: how long more nodes may join once the minimum did;
        // close: how long the nodes have to report the end of a generation.
        std::optional<double> number = ParseDouble(value);
        if (!number || !(*number >= 0)) {
          return Usage(conf.source + " " + key + "=" + value + ": expected a number of seconds, 0 or more");
        }
        Set(key == "last_call_timeout" ? "direct.last_call_timeout" : "direct.exit_barrier_timeout", value, conf);
      } else if (key == "read_timeout") {
        auto timeout = seconds();
        if (!timeout.ok()) return timeout.error();
        read_timeout = value;
      } else if (key == "keep_alive_interval") {
        auto interval = seconds();
        if (!interval.ok()) return interval.error();
        keep_alive_interval = *interval;
      } else if (key == "keep_alive_max_attempt") {
        auto attempts = seconds();
        if (!attempts.ok()) return attempts.error();
        keep_alive_attempts = *attempts;
      } else if (key == "is_host" || key == "use_agent_store" || key == "rank" || key == "store_type" ||
                 key == "use_libuv") {
        Note(Level::kDebug, conf.source + " " + key + ": not needed (it tunes torchrun's rendezvous store)");
      } else {
        Note(Level::kWarn, conf.source + " " + key + "=" + value + ": not a setting torchrun's rendezvous reads; ignored");
      }
    }
    if (keep_alive_interval || keep_alive_attempts) {
      // torchrun: a node is lost after keep_alive_max_attempt missed beats (defaults 5 s x 3).
      double interval = keep_alive_interval.value_or(5), attempts = keep_alive_attempts.value_or(3);
      Set("direct.heartbeat_interval", FormatSeconds(interval), conf);
      Set("direct.heartbeat_timeout", FormatSeconds(interval * std::max(1.0, attempts)), conf);
      if (read_timeout) {
        Note(Level::kWarn, conf.source + " read_timeout=" + *read_timeout + ": ignored, keep_alive_* set how long a "
                                                                             "silent node may stay silent");
      }
    } else if (read_timeout) {
      // How long a peer may stay silent before it is called lost.
      Set("direct.heartbeat_timeout", *read_timeout, conf);
    }
    return Status::Ok();
  }

  static std::string FormatSeconds(double seconds) {
    std::string text = std::to_string(seconds);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.ends_with('.')) text.pop_back();
    return text;
  }

  // The training script, as torchrun starts it.
  Status Worker() {
    std::optional<std::string> exec = Lookup(inputs_.environment, "PYTHON_EXEC");
    bool from_exec = exec && !exec->empty();
    bool beside = !from_exec && !inputs_.python_beside.empty();
    std::string python = from_exec ? *exec : beside ? inputs_.python_beside : "python3";
    std::string found = from_exec || beside ? "" : FindExecutable(python);
    std::string python_note =
        from_exec ? "python: $PYTHON_EXEC = " + python
        : beside  ? "python: " + python + ", beside this torchrun (as torchrun runs its workers with its own interpreter)"
                  : "python: python3 from PATH (" + (found.empty() ? std::string("not found on this host") : found) +
                        "; PYTHON_EXEC is not set; torchrun would use the interpreter it runs in)";
    std::vector<std::string>& argv = command_.worker_argv;
    if (On(Arg::kRunPath)) {
      argv = {python, "-u", "-c", kRunPathCode, script_};
      Note(Level::kPlan, python_note);
      Note(Level::kPlan, "--run-path: each worker runs the script with runpy.run_path in a fresh interpreter");
      if (On(Arg::kModule) || On(Arg::kNoPython)) {
        Note(Level::kDebug, "--run-path takes precedence over -m and --no-python, as in torchrun");
      }
    } else if (On(Arg::kNoPython)) {
      if (On(Arg::kModule)) {
        return Usage("--no-python and -m/--module cannot be used together",
                     "-m runs a Python module (python -m), --no-python runs the script as a program");
      }
      argv = {script_};
    } else {
      argv = {python, "-u"};
      if (On(Arg::kModule)) argv.push_back("-m");
      argv.push_back(script_);
      Note(Level::kPlan, python_note);
    }
    argv.insert(argv.end(), script_args_.begin(), script_args_.end());
    if (const Given* role = Get(Arg::kRole)) {
      if (Trim(role->value).empty()) return Usage(role->source + ": the role is empty");
      Set("direct.role", std::string(Trim(role->value)), *role);
    }
    return Status::Ok();
  }

  // --log-dir, --redirects, --tee, --local-ranks-filter, --logs-specs.
  Status Logs() {
    if (const Given* specs = Get(Arg::kLogsSpecs)) {
      return Usage(specs->source + " " + specs->value +
                       " names a Python plugin (an entry point of the group torchrun.logs_specs), which primus-cli "
                       "cannot load",
                   "leave it out: every rank's output is always in <log-dir>/attempt_<n>/<host>.rank<R>.log, and "
                   "--redirects, --tee and --local-ranks-filter choose what reaches the console; for a custom "
                   "LogsSpecs run Python's torchrun");
    }
    if (const Given* dir = Get(Arg::kLogDir)) {
      std::string base(Trim(dir->value));
      if (base.empty()) return Usage(dir->source + ": the directory is empty");
      // Like torchrun, one directory per run below the one given.
      std::string run_dir;
      if (run_id_.empty()) {
        run_dir = inputs_.fresh_run_id;
        Set("direct.run_id", run_dir, *dir);
      } else {
        run_dir = run_id_ + "_" + inputs_.fresh_run_id;
      }
      Set("direct.log_dir", base + "/" + run_dir, *dir);
      Set("direct.torchrun_log_files", "true", *dir);
      Note(Level::kPlan, dir->source + ": this run's logs go to " + base + "/" + run_dir +
                             "/attempt_<n>/: torchrun's <local rank>/{stdout,stderr}.log (the streams --redirects "
                             "or --tee name) and <local rank>/error.json, and beside them <host>.rank<R>.log "
                             "(stdout and stderr together, each line stamped)");
    }
    for (auto [arg, key] : {std::pair{Arg::kRedirects, "direct.redirects"}, std::pair{Arg::kTee, "direct.tee"}}) {
      const Given* given = Get(arg);
      if (given == nullptr) continue;
      auto selection = agent::ParseStreamSelection(given->value, given->source);
      if (!selection.ok()) return selection.error();
      Set(key, agent::FormatStreamSelection(*selection), *given);
    }
    for (Arg arg : {Arg::kDuplicateStdoutFilters, Arg::kDuplicateStderrFilters}) {
      const Given* filters = Get(arg);
      if (filters == nullptr || Trim(filters->value).empty()) continue;  // torchrun's default: none
      return Usage(filters->source + " '" + filters->value + "': not supported yet (torchrun copies the lines "
                       "containing one of these words to filtered_stdout.log or filtered_stderr.log)",
                   "leave it out: every rank's lines are in <log-dir>/<run>/attempt_<n>/<host>.rank<R>.log, "
                   "stamped and marked O or E, so grep -h -e WORD finds them across ranks");
    }
    if (const Given* filter = Get(Arg::kLocalRanksFilter)) {
      auto ranks = agent::ParseRankList(filter->value);
      if (!ranks.ok() || ranks->empty()) {
        return Usage(filter->source + " '" + filter->value + "': expected a comma-separated list of local ranks",
                     "e.g. " + filter->source + " 0,1");
      }
      Set("direct.local_ranks_filter", std::string(Trim(filter->value)), *filter);
    }
    return Status::Ok();
  }

  Status Restarts() {
    const Given* restarts = Get(Arg::kMaxRestarts);
    if (restarts == nullptr) return Status::Ok();
    std::optional<int64_t> value = Integer(restarts->value);
    if (!value) return Usage(restarts->source + " '" + restarts->value + "': expected an integer");
    if (*value < 0) {
      return Usage(restarts->source + " " + restarts->value + ": the number of restarts must be 0 or more",
                   "give 0 for no restart (torchrun refuses a negative count too)");
    }
    if (*value > 1000000) return Usage(restarts->source + " " + restarts->value + ": at most 1000000 restarts");
    Set("direct.max_restarts", std::to_string(*value), *restarts);
    return Status::Ok();
  }

  // Flags that tune torchrun's own machinery: checked as torchrun checks
  // them, then not needed.
  Status Internals() {
    if (const Given* interval = Get(Arg::kMonitorInterval)) {
      std::optional<double> seconds = ParseDouble(Trim(interval->value));
      if (!seconds) return Usage(interval->source + " '" + interval->value + "': expected a number of seconds");
      Note(Level::kDebug, interval->source + " " + interval->value +
                              ": not needed; the agent learns of a worker's end at once instead of polling");
    }
    if (const Given* method = Get(Arg::kStartMethod)) {
      std::string value(Trim(method->value));
      if (value != "spawn" && value != "fork" && value != "forkserver") {
        return Usage(method->source + " '" + method->value + "': choose from spawn, fork, forkserver");
      }
      Note(Level::kDebug, method->source + " " + value +
                              ": not needed; every worker is a fresh process started with exec, like spawn");
    }
    if (const Given* handler = Get(Arg::kEventLogHandler)) {
      if (Trim(handler->value) != "null") {
        Note(Level::kWarn, handler->source + " " + handler->value +
                               ": ignored; torchelastic's event handlers are Python plugins, and the agent logs its own "
                               "events (starts, failures, restarts) itself");
      }
    }
    if (const Given* shutdown = Get(Arg::kShutdownTimeout)) {
      auto seconds = NonNegative(*shutdown, "seconds between SIGTERM and SIGKILL", 86400);
      if (!seconds.ok()) return seconds.error();
      Set("direct.term_timeout", std::to_string(*seconds), *shutdown);
    }
    if (On(Arg::kVirtualLocalRank)) {
      const Given& virtual_rank = *Get(Arg::kVirtualLocalRank);
      Set("direct.virtual_local_rank", "true", virtual_rank);
      Note(Level::kPlan, virtual_rank.source + ": every worker gets LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES naming "
                                               "only its own GPU (the list's entry at its local rank)");
    }
    if (const Given* numa = Get(Arg::kNumaBinding)) {
      std::string value(Trim(numa->value));
      if (value == "node") {
        Set("direct.numa_bind", "true", *numa);
      } else if (value == "socket" || value == "exclusive" || value == "core-complex") {
        return Usage(numa->source + " " + value + ": not supported yet",
                     numa->source + " node binds each worker to the CPUs of its GPU's NUMA node");
      } else {
        return Usage(numa->source + " '" + numa->value + "': choose from node, socket, exclusive, core-complex");
      }
    }
    if (const Given* signals = Get(Arg::kSignalsToHandle)) {
      std::vector<std::string> unhandled;
      for (const std::string& raw : Split(signals->value, ',')) {
        std::string name(Trim(raw));
        std::optional<int> number = SignalNumber(name);
        if (!number) {
          return Usage(signals->source + " '" + signals->value + "': '" + name + "' is not a signal name",
                       "write names like SIGTERM,SIGINT,SIGUSR2");
        }
        if (*number != SIGTERM && *number != SIGINT && *number != SIGHUP && *number != SIGUSR1 && *number != SIGUSR2) {
          unhandled.push_back(name);
        }
      }
      Note(Level::kDebug, signals->source + ": not needed; the agent always stops the workers on SIGTERM, SIGINT and "
                                            "SIGHUP and forwards SIGUSR1 and SIGUSR2");
      // SIGQUIT is in torchrun's default list; only an explicit choice is worth a warning.
      std::erase(unhandled, std::string("SIGQUIT"));
      if (!unhandled.empty()) {
        Note(Level::kWarn, signals->source + ": the agent does not forward " + Join(unhandled, ", ") +
                               " (it handles SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2)");
      }
    }
    return Status::Ok();
  }

  const TorchrunRequest& inputs_;
  TorchrunCommand command_;
  std::map<Arg, Given> given_;
  std::string script_;
  std::vector<std::string> script_args_;
  int nnodes_ = 1;      // the most nodes
  int min_nnodes_ = 1;  // the fewest (== nnodes_ unless elastic)
  bool node_rank_given_ = false;
  std::string run_id_;
};

}  // namespace

Result<TorchrunCommand> ReadTorchrunCommand(const TorchrunRequest& inputs) {
  Reader reader(inputs);
  Result<TorchrunCommand> command = reader.Read();
  if (!command.ok()) return command;
  // torchrun's defaults where ours differ: it reads only its own flags and
  // PET_* (no Slurm or pod variables), sets OMP_NUM_THREADS=1 for several
  // workers, and leaves the workers' stderr on stderr.
  command->defaults.push_back(config::FlagSetting{"direct.platform", {"none"}, "torchrun"});
  command->defaults.push_back(config::FlagSetting{"direct.omp_num_threads", {"torchrun"}, "torchrun"});
  command->defaults.push_back(config::FlagSetting{"direct.worker_stderr", {"stderr"}, "torchrun"});
  return command;
}

const std::vector<OptionSpec>& TorchrunOptions() {
  static const std::vector<OptionSpec> table = [] {
    const std::map<Arg, std::string> values = {
        {Arg::kNnodes, "N|MIN:MAX"},           {Arg::kNprocPerNode, "N|auto|gpu|cpu"},
        {Arg::kRdzvBackend, "static|c10d|etcd-v2"}, {Arg::kStartMethod, "spawn|fork|forkserver"},
        {Arg::kLogDir, "DIR"},                  {Arg::kRdzvEndpoint, "HOST:PORT"}};
    std::vector<OptionSpec> options;
    for (const TorchrunFlag& flag : Flags()) {
      if (flag.arg == Arg::kHelp) continue;
      OptionSpec spec;
      spec.names = flag.names;
      spec.kind = flag.takes_value ? OptionSpec::Kind::kValue : OptionSpec::Kind::kFlag;
      auto value = values.find(flag.arg);
      spec.value_name = value != values.end() ? value->second : flag.takes_value ? "VALUE" : "";
      options.push_back(std::move(spec));
    }
    return options;
  }();
  return table;
}

std::string TorchrunHelp() {
  return "usage: torchrun [options] training_script [training_script_args ...]\n"
         "       primus-cli [global options] torchrun [options] training_script [training_script_args ...]\n"
         "\n"
         "torchrun's command line (torch 2.x), run by primus-cli's node agent: the same workers, environment\n"
         "(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, ...) and flags, with per-rank log files, a root-cause\n"
         "banner and --dry-run. Everything after the training script is the script's. Every flag may also\n"
         "be given as PET_<FLAG> (PET_NNODES=2). docs/torchrun.md has the full table.\n"
         "\n"
         "  --nnodes N|MIN:MAX               nodes; MIN:MAX is an elastic job (needs c10d or etcd-v2)\n"
         "  --nproc-per-node N|auto|gpu|cpu  workers on this node (default 1)\n"
         "  --node-rank R                    this node's rank with the static rendezvous (default 0)\n"
         "  --master-addr A, --master-port P node rank 0's address and port (static rendezvous; default\n"
         "                                   127.0.0.1, and a free port on one node, 29500 on several)\n"
         "  --rdzv-backend static|c10d|etcd-v2  c10d: the agent on the endpoint's host coordinates and hands\n"
         "                                   node ranks out; etcd-v2: an etcd server names the coordinator\n"
         "  --rdzv-endpoint HOST[:PORT]      c10d: the coordinating host; etcd-v2: the etcd server\n"
         "  --rdzv-id ID                     the run id (TORCHELASTIC_RUN_ID); default: generated\n"
         "  --rdzv-conf K=V,...              join_timeout, last_call_timeout, close_timeout, read_timeout,\n"
         "                                   keep_alive_interval, keep_alive_max_attempt are used\n"
         "  --standalone                     one node, a free port\n"
         "  --max-restarts N                 restart all workers up to N times (N >= 0)\n"
         "  --role NAME                      ROLE_NAME (default: default)\n"
         "  -m, --module                     run the script as a module: python -u -m MODULE\n"
         "  --no-python                      run the script as a program, without python\n"
         "  --run-path                       run the script with runpy.run_path\n"
         "  --log-dir DIR                    logs of this run in DIR/<run id>/attempt_<n>/: torchrun's\n"
         "                                   <local rank>/{stdout,stderr}.log and error.json, and ours\n"
         "  -r, --redirects 0-3|R:S,...      keep streams off the console (1 stdout, 2 stderr, 3 both)\n"
         "  -t, --tee 0-3|R:S,...            show them on the console anyway\n"
         "  --local-ranks-filter R,R         only these local ranks on the console\n"
         "  --virtual-local-rank             LOCAL_RANK=0 in every worker, which sees only its own GPU\n"
         "  --shutdown-timeout S             seconds between SIGTERM and SIGKILL when stopping workers\n"
         "  --numa-binding node              bind each worker to its GPU's NUMA node (other modes: not yet)\n"
         "  --monitor-interval, --start-method, --signals-to-handle, --local-addr, --event-log-handler\n"
         "                                   accepted; not needed by the agent (--debug says why)\n"
         "  --logs-specs NAME                refused: a Python plugin\n"
         "  --duplicate-std{out,err}-filters refused: not supported yet (grep the rank logs)\n"
         "\n"
         "The python that runs the script is $PYTHON_EXEC, else the python3 beside this torchrun\n"
         "(/venv/bin/torchrun -> /venv/bin/python3), else python3 from PATH. primus-cli's global\n"
         "options (--dry-run, --debug, --config, --set, ...) may be given among torchrun's.\n"
         "Differences: a failure exits with the failing worker's own code (torchrun: 1; set\n"
         "PRIMUS_DIRECT_FAILURE_EXIT_CODE=1 for torchrun's); the console lines carry [host:rank] prefixes.\n"
         "\nExamples:\n"
         "  torchrun --nproc-per-node 8 train.py --epochs 1\n"
         "  torchrun --nnodes 1:4 --rdzv-backend c10d --rdzv-endpoint node0:29400 train.py\n"
         "  primus-cli --dry-run torchrun --standalone --nproc-per-node 2 -m my_package.train\n";
}

}  // namespace primus::cli
