// `ssh`: one node agent per host of a hostfile (or a host list), started
// through the system's OpenSSH client, acting as one job over the agents'
// control channel. No scheduler needed: machines with passwordless ssh.
//
//   1. hosts:   hostfile.h (formats, --include/--exclude, -N), slots -> --nproc-per-node
//   2. checks:  every host at once (bounded): reachable, authenticated, primus-cli at the
//               same path or in the per-user cache (sha256 checked), glibc new enough;
//               all problems in one error (ssh_command.h, io/stoppable_commands.h)
//   3. copies:  the binary into ${XDG_CACHE_HOME:-~/.cache}/primus-cli/<sha256>/ where needed
//   4. launch:  ssh ... host -- 'cd ...; exec env ... primus-cli direct --nnodes N --node-rank R ...'
//               (under `ssh ... -- container ... --`: primus-cli container ... -- direct ...)
//               with the job token on each agent's stdin (ssh_session.h RunSessions)
#include <iostream>
#include <optional>
#include <set>

#include "config/launcher_config.h"
#include "io/signal_channel.h"
#include "io/stoppable_commands.h"
#include "runtime/bad_node_relaunch.h"
#include "runtime/container_glibc.h"
#include "runtime/hostfile.h"
#include "runtime/node_dry_run.h"
#include "runtime/runtime.h"
#include "runtime/slurm_command_line.h"
#include "runtime/slurm_job_token.h"
#include "runtime/ssh_command.h"
#include "runtime/ssh_session.h"
#include "snapshot/redaction.h"
#include "util/files.h"
#include "util/log.h"
#include "util/environment.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

// Settings the ssh runtime gives every node itself.
constexpr const char* kOwnDirectOptions[] = {"--nnodes", "--node-rank", "--master-addr", "--master-port",
                                             "--rendezvous", "--rdzv-endpoint", "--platform", "--single",
                                             "--standalone"};

bool IsName(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string NormalizedFlag(const std::string& token) {
  std::string name = token.substr(0, token.find('='));
  if (name.starts_with("--")) name = "--" + ReplaceAll(name.substr(2), "_", "-");
  return name;
}

// The hosts of the hostfile or list, selected by --include/--exclude, the
// first `count` of them (0: all).
Result<std::vector<HostEntry>> LoadHosts(const config::LauncherConfig& launcher, int count) {
  const std::string& hostfile = launcher.GetString("ssh.hostfile");
  const std::string& list = launcher.GetString("ssh.hosts");
  if (hostfile.empty() == list.empty()) {
    return UsageError(hostfile.empty() ? "ssh needs the hosts: --hostfile FILE or --hosts LIST"
                                       : "give either --hostfile or --hosts, not both",
                      "primus-cli ssh --hostfile hostfile -- train pretrain --config exp.yaml");
  }
  Result<std::vector<HostEntry>> hosts = [&]() -> Result<std::vector<HostEntry>> {
    if (!list.empty()) return HostsFromList(list, "--hosts");
    Result<std::string> text = ReadFile(hostfile);
    if (!text.ok()) return ConfigError("cannot read the hostfile " + hostfile + ": " + text.error().message);
    return ParseHostfile(*text, hostfile);
  }();
  if (!hosts.ok()) return hosts.error();
  return SelectHosts(*hosts, launcher.GetString("ssh.include"), launcher.GetString("ssh.exclude"), count);
}

// --env K=V as it is; --env K takes this host's value; anything else is a
// file each host reads (a shared filesystem).
Result<std::vector<std::string>> EnvEntries(const std::vector<std::string>& entries) {
  std::vector<std::string> out;
  std::map<std::string, std::string> environment = ProcessEnvironment();
  for (const std::string& entry : entries) {
    if (entry.find('=') != std::string::npos) {
      out.push_back(entry);
    } else if (IsName(entry)) {
      auto found = environment.find(entry);
      if (found == environment.end()) {
        return UsageError("--env " + entry + ": the variable is not set here",
                          "export it, or write --env " + entry + "=VALUE");
      }
      out.push_back(entry + "=" + found->second);
    } else {
      out.push_back(entry);
    }
  }
  return out;
}

// The first host's HostName as ssh would connect to it (aliases from the
// ssh configuration resolved, no connection made).
std::string SshHostName(const std::vector<std::string>& ssh_options, const std::string& host) {
  std::vector<std::string> argv = {"ssh", "-G"};
  argv.insert(argv.end(), ssh_options.begin(), ssh_options.end());
  argv.push_back(host);
  CommandOptions options;
  options.timeout_s = 10;
  auto result = RunCommand(argv, options);
  if (result.ok() && result->exit_code == 0) {
    for (const std::string& line : Split(result->out, '\n')) {
      if (line.starts_with("hostname ")) return std::string(Trim(line.substr(9)));
    }
  }
  return HostName(host);
}

// A host check's or a copy's options: bounded, and ended 1 s after its
// SIGTERM (an ssh client has nothing to save).
CommandOptions HelperOptions(double timeout_s) {
  CommandOptions options;
  options.timeout_s = timeout_s;
  options.kill_grace_s = 1;
  return options;
}

Error StoppedBeforeTheLaunch(int signal) {
  return StoppedBySignal(signal, io::SignalName(signal) +
                                     ": stopped during the host checks and copies; nothing was started on any host");
}

Result<std::string> Sha256Of(const std::string& path) {
  CommandOptions options;
  options.timeout_s = 120;
  auto result = RunCommand({"sha256sum", "--", path}, options);
  if (!result.ok()) return result.error();
  if (result->exit_code != 0 || result->out.size() < 64) {
    return UnavailableError("sha256sum " + path + " failed: " + result->Tail(3));
  }
  return result->out.substr(0, 64);
}

class SshRuntime : public Runtime {
 public:
  std::string name() const override { return "ssh"; }
  std::string summary() const override { return "run on the hosts of a hostfile through ssh (no scheduler)"; }
  std::string usage() const override {
    return "primus-cli [global options] ssh (--hostfile FILE | --hosts LIST) [-N COUNT] [--include/--exclude LIST] "
           "[ssh options] -- [container [options] --] [direct [options] --] <task> [args]";
  }
  std::vector<std::string> examples() const override {
    return {
        "primus-cli ssh --hosts gpu[01-04] -- train pretrain --config exp.yaml",
        "primus-cli ssh --hostfile hosts.txt -N 2 -- container --image IMG -- benchmark comm --op allreduce",
    };
  }
  std::string details() const override {
    return "Starts one node agent per host with the system's OpenSSH client (BatchMode: keys, ssh-agent,\n"
           "~/.ssh/config and ProxyJump apply; no password prompt):\n"
           "  ssh -o BatchMode=yes ... HOST -- 'primus-cli direct --nnodes N --node-rank R --master-addr H0 ...'\n"
           "Node 0 is the first host. Before the launch every host is checked at once (reachable,\n"
           "authenticated, primus-cli present, glibc new enough) and all problems are listed in one error;\n"
           "a host without this primus-cli at the same path gets a copy in ~/.cache/primus-cli/<sha256>/.\n"
           "The job token travels on each agent's standard input. Ctrl-C stops the workers on every host.\n"
           "`ssh ... -- container --image IMAGE [options] -- <task>` runs each host's agent inside the image\n"
           "(primus-cli container ... -- direct --nnodes N ... on every host; the host network, the token by\n"
           "name).\n"
           "Other flags are passed to ssh (-F FILE, -J JUMP, -i KEY, -o K=V, -l USER, -p PORT). See docs/ssh.md.\n";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--hostfile"}, K::kValue, "FILE", "ssh.hostfile", "the hosts: one per line, 'host slots=N' or 'host:N'"},
        {{"--hosts", "-H"}, K::kValue, "LIST", "ssh.hosts", "the hosts as a Slurm-style list: gpu[01-04],gpu07"},
        {{"--nodes", "-N"}, K::kValue, "COUNT", "ssh.nodes", "use the first COUNT hosts"},
        {{"--include"}, K::kValue, "LIST", "ssh.include", "only these hosts"},
        {{"--exclude"}, K::kValue, "LIST", "ssh.exclude", "leave these hosts out"},
        {{"--env"}, K::kValue, "K=V|K|FILE", "ssh.env",
         "a variable for the workers on every host; K alone passes this host's value", true},
        {{"--master-addr"}, K::kValue, "ADDR", "ssh.master_addr", "node 0's address as the hosts reach it"},
        {{"--master-port"}, K::kValue, "PORT", "ssh.master_port", "rendezvous port on node 0 (control channel: +1)"},
        {{"--connect-timeout"}, K::kValue, "SECONDS", "ssh.connect_timeout", "ssh's ConnectTimeout"},
        {{"--parallel"}, K::kValue, "N", "ssh.parallel", "hosts checked at the same time"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"direct", "container"}; }
  UnknownOptionPolicy unknown_options() const override { return UnknownOptionPolicy::kPassThrough; }

  Result<int> Execute(const RuntimeContext& context) override {
    const Invocation& invocation = *context.invocation;
    const ModeInvocation& mode = invocation.chain[context.depth];
    const config::LauncherConfig& launcher = *context.launcher;

    // Inner modes: `container ... --` runs each host's agent inside the image
    // (its options as written); direct's own options pass on.
    std::vector<std::string> direct_options;
    std::optional<std::vector<std::string>> container_options;
    for (size_t i = context.depth + 1; i < invocation.chain.size(); ++i) {
      const ModeInvocation& inner = invocation.chain[i];
      if (inner.mode == "container") {
        container_options = inner.written;
        continue;
      }
      if (inner.mode != "direct") {  // the command line parser allows only inner_modes()
        return UsageError("'ssh ... -- " + inner.mode + "' is not supported",
                          "primus-cli ssh ... -- [container ... --] [direct ... --] <task>");
      }
      for (const std::string& token : inner.written) {
        std::string flag = NormalizedFlag(token);
        for (const char* own : kOwnDirectOptions) {
          if (flag == own) {
            return UsageError("direct " + token + " cannot be given under ssh: ssh sets it for every node",
                              "the hostfile gives the nodes (node 0 is the first host); ssh --master-addr and "
                              "--master-port choose node 0's address and port");
          }
        }
      }
      direct_options = inner.written;
    }

    Result<std::vector<HostEntry>> hosts = LoadHosts(launcher, static_cast<int>(launcher.GetInt("ssh.nodes")));
    if (!hosts.ok()) return hosts.error();
    Result<int> slots = CommonSlots(*hosts);
    if (!slots.ok()) return slots.error();
    Result<std::vector<std::string>> env = EnvEntries(launcher.GetStringList("ssh.env"));
    if (!env.ok()) return env.error();

    std::vector<std::string> ssh_options = launcher.GetStringList("ssh.options");
    ssh_options.insert(ssh_options.end(), mode.passthrough.begin(), mode.passthrough.end());
    int connect_timeout = static_cast<int>(launcher.GetInt("ssh.connect_timeout"));

    Result<std::string> binary_path = SelfExecutable();
    if (!binary_path.ok()) return binary_path.error();
    RemoteBinary binary{*binary_path, "", false};

    NodeCommand node;
    node.globals = GlobalArguments(context, options());
    node.nnodes = static_cast<int>(hosts->size());
    node.master_addr = launcher.GetString("ssh.master_addr");
    if (node.master_addr.empty()) node.master_addr = SshHostName(ssh_options, hosts->front().host);
    node.master_port = static_cast<int>(launcher.GetInt("ssh.master_port"));
    bool user_nproc = std::any_of(direct_options.begin(), direct_options.end(),
                                  [](const std::string& t) { return NormalizedFlag(t) == "--nproc-per-node"; });
    node.nproc_per_node = user_nproc ? 0 : *slots;
    node.env = *env;
    node.direct_options = direct_options;
    node.in_container = container_options.has_value();
    if (container_options) node.container_options = *container_options;
    node.task = {invocation.task};
    node.task.insert(node.task.end(), invocation.task_args.begin(), invocation.task_args.end());
    std::string cwd = CurrentDir();

    if (Status status = snapshot::CheckNoSecretArguments(
            AgentArguments(node, 0), "the remote command line (every user of a host can read it with ps)",
            "set it on the hosts instead: their shell startup files, or --env FILE with a file on a shared "
            "filesystem that only you can read (each host reads it)");
        !status.ok()) {
      return status.error();
    }

    if (context.dry_run) {
      std::cout << "ssh: " << hosts->size() << " hosts, node 0 = " << hosts->front().host << " (master "
                << node.master_addr << ":" << node.master_port << ")"
                << (node.nproc_per_node > 0 ? ", " + std::to_string(node.nproc_per_node) + " workers per node" : "")
                << "\n";
      for (size_t i = 0; i < hosts->size(); ++i) {
        std::vector<std::string> argv =
            SshArgv(ssh_options, connect_timeout, (*hosts)[i].host,
                    AgentShellCommand(binary, cwd, AgentArguments(node, static_cast<int>(i))));
        std::cout << "  node " << i << ": " << ShellJoin(argv) << "\n";
      }
      std::cout << "each agent reads " << kJobTokenVariable << " from its standard input ("
                << (ProcessEnvironment().count(kJobTokenVariable) ? "this host's value" : "a new random token")
                << "); a host without " << binary.path
                << " (same sha256) runs a copy from ~/.cache/primus-cli/<sha256>/ instead"
                << (node.in_container ? "; on each host, container passes it on by name (--env "
                                        + std::string(kJobTokenVariable) + ") to the agent inside the image"
                                      : "")
                << "\n"
                << std::flush;
      std::vector<std::string> node_command = {binary.path};
      std::vector<std::string> arguments = AgentArguments(node, 0);
      node_command.insert(node_command.end(), arguments.begin(), arguments.end());
      if (Status checked = CheckNodeCommand({node_command, 1, "each ssh host"}); !checked.ok()) return checked.error();
      return 0;
    }

    Result<std::string> sha = Sha256Of(binary.path);
    if (!sha.ok()) return sha.error();
    binary.sha256 = *sha;
    std::map<std::string, std::string> environment = ProcessEnvironment();
    Result<std::map<std::string, std::string>> fresh = JobTokenEnvironment(environment);
    if (!fresh.ok()) return fresh.error();
    std::string token = fresh->empty() ? environment[kJobTokenVariable] : fresh->at(kJobTokenVariable);
    int parallel = static_cast<int>(launcher.GetInt("ssh.parallel"));
    std::string configured_master = launcher.GetString("ssh.master_addr");

    // One run of the job on `run_hosts`; the hosts whose agent left the job as a bad node.
    auto run_on = [&](const std::vector<HostEntry>& run_hosts, int spare) -> Result<StepEnd> {
      NodeCommand run_node = node;
      run_node.nnodes = static_cast<int>(run_hosts.size());
      run_node.master_addr = configured_master.empty() ? SshHostName(ssh_options, run_hosts.front().host)
                                                       : configured_master;
      if (spare > 0) {
        std::vector<std::string> spare_option = SpareNodesOption(spare);
        run_node.globals.insert(run_node.globals.end(), spare_option.begin(), spare_option.end());
      }
      Result<std::vector<RemoteBinary>> placed = CheckHosts(run_hosts, ssh_options, connect_timeout, binary, cwd, parallel);
      if (!placed.ok()) return placed.error();
      std::vector<SshSession> sessions;
      for (size_t i = 0; i < run_hosts.size(); ++i) {
        std::string remote = AgentShellCommand((*placed)[i], cwd, AgentArguments(run_node, static_cast<int>(i)));
        sessions.push_back({HostName(run_hosts[i].host), SshArgv(ssh_options, connect_timeout, run_hosts[i].host, remote)});
        log::Debug("node {}: {}", i, ShellJoin(sessions.back().argv));
      }
      log::Info("starting {} node agents through ssh (node 0: {}, master {}:{})", sessions.size(),
                run_hosts.front().host, run_node.master_addr, run_node.master_port);
      SessionOptions session_options;
      session_options.token = token;
      std::vector<int> statuses;
      auto code = RunSessions(sessions, session_options, &statuses);
      if (!code.ok()) return code.error();
      StepEnd end;
      end.exit_code = *code;
      for (size_t i = 0; i < statuses.size() && i < run_hosts.size(); ++i) {
        if (statuses[i] == static_cast<int>(ExitCode::kNodeExcluded)) end.excluded_hosts.push_back(HostName(run_hosts[i].host));
      }
      return end;
    };
    if (!launcher.GetBool("direct.exclude_bad_nodes")) {
      auto end = run_on(*hosts, 0);
      if (!end.ok()) return end.error();
      return end->exit_code;
    }
    // direct.exclude_bad_nodes: the hosts past -N are the spares.
    Result<std::vector<HostEntry>> pool = LoadHosts(launcher, 0);
    if (!pool.ok()) return pool.error();
    RelaunchPlan relaunch;
    relaunch.nodes = static_cast<int>(hosts->size());
    for (const HostEntry& entry : *pool) relaunch.pool.push_back(HostName(entry.host));
    relaunch.max_relaunches = static_cast<int>(launcher.GetInt("direct.max_restarts"));
    return RunExcludingBadNodes(relaunch, [&](const std::vector<std::string>& excluded, int spare,
                                              int attempt) -> Result<StepEnd> {
      std::vector<HostEntry> run_hosts;
      for (const HostEntry& entry : *pool) {
        bool bad = std::find(excluded.begin(), excluded.end(), HostName(entry.host)) != excluded.end();
        if (!bad && run_hosts.size() < hosts->size()) run_hosts.push_back(entry);
      }
      (void)attempt;
      return run_on(run_hosts, spare);
    });
  }

 private:
  // Every host at once: where primus-cli is (or copy it), glibc, and every
  // problem of every host in one error. A signal meanwhile ends the checks
  // and copies still running: StoppedBySignal (exit 128+N).
  static Result<std::vector<RemoteBinary>> CheckHosts(const std::vector<HostEntry>& hosts,
                                                      const std::vector<std::string>& ssh_options,
                                                      int connect_timeout, const RemoteBinary& binary,
                                                      const std::string& cwd, int parallel) {
    std::vector<io::StoppableCommand> checks;
    for (const HostEntry& host : hosts) {
      checks.push_back({SshArgv(ssh_options, connect_timeout, host.host, CheckShellCommand(binary, cwd)),
                        HelperOptions(connect_timeout + 20.0)});
    }
    io::StoppableRun checked = io::RunStoppable(checks, parallel);
    if (checked.stop_signal != 0) return StoppedBeforeTheLaunch(checked.stop_signal);
    Result<std::string> required = RequiredGlibc(binary.path);
    std::vector<std::string> problems;
    std::vector<RemoteBinary> placed(hosts.size(), binary);
    std::vector<size_t> to_copy;
    for (size_t i = 0; i < hosts.size(); ++i) {
      const std::string& host = hosts[i].host;
      if (!checked.results[i].ok()) {
        problems.push_back(host + ": " + checked.results[i].error().message);
        continue;
      }
      const CommandResult& result = *checked.results[i];
      if (result.timed_out) {
        problems.push_back(host + ": no answer within " + std::to_string(connect_timeout + 20) +
                           " s: connected, but the check never finished (startup files such as ~/.bashrc "
                           "that wait on something look like this: time ssh " + host + " true)");
        continue;
      }
      if (result.exit_code == 255) {
        problems.push_back(host + ": " + DescribeSshFailure(result.err));
        continue;
      }
      Result<HostCheck> check = ParseCheckOutput(result.out, binary.sha256);
      if (result.exit_code != 0 || !check.ok()) {
        problems.push_back(host + ": the check failed (exit " + std::to_string(result.exit_code) + "): " +
                           (check.ok() ? result.Tail(2) : check.error().message));
        continue;
      }
      if (required.ok() && !check->glibc.empty() && CompareVersions(check->glibc, *required) < 0) {
        problems.push_back(host + ": glibc " + check->glibc + " is too old: primus-cli needs glibc " + *required +
                           " or newer");
        continue;
      }
      if (!check->cwd_exists) {
        log::Warn("[{}] no directory {} there: the agent starts in the home directory", HostName(host), cwd);
      }
      if (check->same_path) continue;
      placed[i].in_cache = true;
      if (!check->cached) to_copy.push_back(i);
    }
    if (problems.empty() && !to_copy.empty()) {
      Result<std::string> content = ReadFile(binary.path);
      if (!content.ok()) return content.error();
      std::vector<io::StoppableCommand> copies;
      for (size_t i : to_copy) {
        log::Info("[{}] copying primus-cli ({} MB) to ~/.cache/primus-cli/{}/", HostName(hosts[i].host),
                  content->size() >> 20, binary.sha256.substr(0, 12));
        CommandOptions options = HelperOptions(600);
        options.stdin_data = *content;
        copies.push_back({SshArgv(ssh_options, connect_timeout, hosts[i].host, CopyShellCommand(binary.sha256)),
                          std::move(options)});
      }
      io::StoppableRun copy_run = io::RunStoppable(copies, parallel);
      if (copy_run.stop_signal != 0) return StoppedBeforeTheLaunch(copy_run.stop_signal);
      for (size_t k = 0; k < to_copy.size(); ++k) {
        if (!copy_run.results[k].ok()) {
          problems.push_back(hosts[to_copy[k]].host + ": copying primus-cli failed: " +
                             copy_run.results[k].error().message);
          continue;
        }
        const CommandResult& copied = *copy_run.results[k];
        if (copied.exit_code != 0) {
          problems.push_back(hosts[to_copy[k]].host + ": copying primus-cli failed: " +
                             (copied.exit_code == 255 ? DescribeSshFailure(copied.err) : copied.Tail(2)));
        }
      }
    }
    if (!problems.empty()) {
      return UnavailableError(std::to_string(problems.size()) + " of " + std::to_string(hosts.size()) +
                                  " hosts cannot run the job:\n  " + Join(problems, "\n  "),
                              "check with: ssh -o BatchMode=yes HOST true (keys, ~/.ssh/config, known_hosts); "
                              "leave a host out with --exclude HOST");
    }
    return placed;
  }
};

RuntimeRegistration<SshRuntime> ssh_registration;

}  // namespace
}  // namespace primus::runtime
