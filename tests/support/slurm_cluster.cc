#include "slurm_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "free_port.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

using Clock = std::chrono::steady_clock;

ProcessResult Run(const std::vector<std::string>& argv) {
  ProcessOptions options;
  options.timeout_s = 30;
  return RunProcess(argv, options);
}

// "" or the command and its output when it failed.
std::string Must(const std::vector<std::string>& argv) {
  ProcessResult result = Run(argv);
  if (result.exit_code == 0) return "";
  return ShellJoin(argv) + " failed (" + std::to_string(result.exit_code) + "): " + result.all();
}

// A free 10.x.y.0/24: none of this machine's addresses or routes in it.
std::string FreeSubnet() {
  std::string taken = Run({"ip", "-4", "-o", "addr", "show"}).out + Run({"ip", "-4", "route", "show"}).out;
  pid_t pid = getpid();
  int x = 64 + pid % 128;
  for (int attempt = 0; attempt < 256; ++attempt) {
    std::string prefix = std::to_string(x) + "." + std::to_string((pid / 128 + attempt) % 256);
    if (taken.find("10." + prefix + ".") == std::string::npos) return prefix;
  }
  return "";
}

// Starts a daemon in the foreground with its output in `log_path`; it is
// killed when this process dies.
pid_t StartDaemon(const std::vector<std::string>& argv, const std::string& log_path,
                  const std::map<std::string, std::string>& env) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY);
  int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (in < 0 || out < 0) _exit(127);
  dup2(in, 0);
  dup2(out, 1);
  dup2(out, 2);
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (std::string& arg : copy) args.push_back(arg.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

// Waits for `pid` to exit, SIGKILL after `timeout_s`.
void Reap(pid_t pid, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Exited(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == pid;
}

std::string Tail(const std::string& path, size_t lines) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return "";
  std::vector<std::string> all = Split(*text, '\n');
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return Join(std::vector<std::string>(all.begin() + static_cast<long>(from), all.end()), "\n");
}

}  // namespace

std::string SlurmCluster::Unavailable() {
  if (geteuid() != 0) return "network namespaces need root";
  for (const char* tool : {"ip", "nsenter", "unshare", "slurmctld", "slurmd", "sinfo", "srun", "sbatch"}) {
    if (FindExecutable(tool).empty()) return std::string(tool) + " is not installed (scripts/setup.sh installs it)";
  }
  return "";
}

std::unique_ptr<SlurmCluster> SlurmCluster::Start(const SlurmClusterOptions& options, std::string* error) {
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster());
  std::string failure = cluster->Setup(options);
  if (failure.empty()) return cluster;
  *error = failure + "\n" + cluster->LogTails();
  return nullptr;  // the destructor stops what was started
}

std::string SlurmCluster::Setup(const SlurmClusterOptions& options) {
  char pattern[] = "/tmp/primus-slurm-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return "cannot create a temporary directory";
  dir_ = pattern;
  conf_ = dir_ + "/slurm.conf";
  std::string pid = std::to_string(getpid());
  prefix_ = FreeSubnet();
  int port = FreePort();
  if (prefix_.empty() || port <= 0) return "no free subnet or port";
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string controller_address = "10." + prefix_ + ".254";

  // The network: a bridge here, one namespace per node with eth0 on it.
  bridge_ = "psb" + pid;
  if (std::string failed = Must({"ip", "link", "add", bridge_, "type", "bridge"}); !failed.empty()) return failed;
  bridge_created_ = true;
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"ip", "addr", "add", controller_address + "/24", "dev", bridge_},
        std::vector<std::string>{"ip", "link", "set", bridge_, "up"}}) {
    if (std::string failed = Must(command); !failed.empty()) return failed;
  }
  std::string hosts = "127.0.0.1 localhost\n" + controller_address + " " + host + "\n";
  for (int i = 1; i <= options.nodes; ++i) {
    nodes_.push_back("node" + std::to_string(i));
    hosts += "10." + prefix_ + "." + std::to_string(i) + " " + nodes_.back() + "\n";
  }
  for (int i = 1; i <= options.nodes; ++i) {
    std::string ns = "psl" + pid + "n" + std::to_string(i);
    std::string veth = "psv" + pid + "n" + std::to_string(i);
    if (std::string failed = Must({"ip", "netns", "add", ns}); !failed.empty()) return failed;
    namespaces_.push_back(ns);
    std::string address = "10." + prefix_ + "." + std::to_string(i) + "/24";
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
          std::vector<std::string>{"ip", "link", "set", veth, "master", bridge_, "up"},
          std::vector<std::string>{"ip", "-n", ns, "addr", "add", address, "dev", "eth0"},
          std::vector<std::string>{"ip", "-n", ns, "link", "set", "lo", "up"},
          std::vector<std::string>{"ip", "-n", ns, "link", "set", "eth0", "up"}}) {
      if (std::string failed = Must(command); !failed.empty()) return failed;
    }
    std::ofstream(dir_ + "/hosts-" + nodes_[static_cast<size_t>(i - 1)]) << hosts;
    std::filesystem::create_directories(dir_ + "/spool/" + nodes_[static_cast<size_t>(i - 1)]);
  }
  std::filesystem::create_directories(dir_ + "/state");

  std::ofstream conf(conf_);
  conf << "ClusterName=primus-test\n"
       << "SlurmctldHost=" << host << "(" << controller_address << ")\n"
       << "SlurmctldPort=" << port << "\n"
       << "AuthType=auth/none\nCredType=cred/none\nSlurmUser=root\n"
       << "StateSaveLocation=" << dir_ << "/state\n"
       << "SlurmdSpoolDir=" << dir_ << "/spool/%n\n"
       << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
       << "SlurmdPidFile=" << dir_ << "/slurmd-%n.pid\n"
       << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\n"
       << "SlurmdLogFile=" << dir_ << "/slurmd-%n.log\n"
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nReturnToService=2\n"
       << "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=1\n"
       << "NodeName=node[1-" << options.nodes << "] NodeAddr=10." << prefix_ << ".[1-" << options.nodes
       << "] CPUs=" << options.cpus_per_node << "\n"
       << "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  conf.close();

  std::map<std::string, std::string> env = {{"SLURM_CONF", conf_}};
  controller_ = StartDaemon({"slurmctld", "-D", "-i", "-f", conf_}, dir_ + "/slurmctld.out", env);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::string inside = "mount --bind " + ShellQuote(dir_ + "/hosts-" + nodes_[i]) + " /etc/hosts && hostname " +
                         nodes_[i] + " && exec slurmd -D -N " + nodes_[i] + " -f " + ShellQuote(conf_);
    daemons_.push_back(StartDaemon({"nsenter", "--net=/run/netns/" + namespaces_[i], "unshare", "-m", "--uts",
                                    "--propagation", "private", "sh", "-c", inside},
                                   dir_ + "/slurmd-" + nodes_[i] + ".out", env));
  }

  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    if (Exited(controller_)) {
      controller_ = -1;
      return "slurmctld exited at start";
    }
    ProcessResult idle = Client({"sinfo", "-h", "-t", "idle", "-o", "%D"});
    if (idle.exit_code == 0 && Trim(idle.out) == std::to_string(nodes_.size())) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "the nodes did not become idle within 30 s: " + Client({"sinfo", "-N"}).all();
}

SlurmCluster::~SlurmCluster() { Stop(); }

void SlurmCluster::Stop() {
  // This cluster's jobs first, so that their steps end while slurmd runs.
  if (controller_ > 0) {
    ProcessResult jobs = Client({"squeue", "-h", "-o", "%i"});
    std::vector<std::string> ids;
    for (const std::string& id : Split(jobs.out, '\n')) {
      if (!Trim(id).empty()) ids.emplace_back(Trim(id));
    }
    if (!ids.empty()) {
      std::vector<std::string> cancel = {"scancel"};
      cancel.insert(cancel.end(), ids.begin(), ids.end());
      Client(cancel);
      auto deadline = Clock::now() + std::chrono::seconds(10);
      while (Clock::now() < deadline && !Trim(Client({"squeue", "-h", "-o", "%i"}).out).empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  for (pid_t daemon : daemons_) kill(daemon, SIGTERM);
  if (controller_ > 0) kill(controller_, SIGTERM);
  for (pid_t daemon : daemons_) Reap(daemon, 5);
  if (controller_ > 0) Reap(controller_, 5);
  daemons_.clear();
  controller_ = -1;
  // What is left inside our namespaces was started there by our slurmd.
  for (pid_t pid : ProcessesInNodes()) kill(pid, SIGKILL);
  for (const std::string& ns : namespaces_) Run({"ip", "netns", "del", ns});
  namespaces_.clear();
  if (bridge_created_) Run({"ip", "link", "del", bridge_});
  bridge_created_ = false;
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    dir_.clear();
  }
}

std::map<std::string, std::optional<std::string>> SlurmCluster::Environment() const {
  return {{"SLURM_CONF", conf_}, {"GLOO_SOCKET_IFNAME", "eth0"}};
}

std::vector<std::string> SlurmCluster::NodeNames() const { return nodes_; }

ProcessResult SlurmCluster::Client(const std::vector<std::string>& argv) const {
  ProcessOptions options;
  options.env["SLURM_CONF"] = conf_;
  options.timeout_s = 30;
  return RunProcess(argv, options);
}

std::vector<pid_t> SlurmCluster::ProcessesInNodes() const {
  std::vector<pid_t> pids;
  for (const std::string& ns : namespaces_) {
    for (const std::string& line : Split(Run({"ip", "netns", "pids", ns}).out, '\n')) {
      if (std::optional<int64_t> pid = ParseInt(Trim(line)); pid && *pid > 0) pids.push_back(static_cast<pid_t>(*pid));
    }
  }
  return pids;
}

std::string SlurmCluster::LogTails() const {
  if (dir_.empty()) return "";
  std::string out;
  std::vector<std::string> logs = {"slurmctld.log", "slurmctld.out"};
  for (const std::string& node : nodes_) {
    logs.push_back("slurmd-" + node + ".log");
    logs.push_back("slurmd-" + node + ".out");
  }
  for (const std::string& log : logs) {
    std::string tail = Tail(dir_ + "/" + log, 8);
    if (!Trim(tail).empty()) out += "--- " + log + "\n" + tail + "\n";
  }
  return out;
}

}  // namespace primus::testing
