#include "netns_hosts.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "start_process.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::testing {
namespace {

// `ip ARGS...`; an error names the command and carries its output.
Status Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOptions options;
  options.timeout_s = 10;
  auto run = RunCommand(argv, options);
  if (!run.ok()) return run.error();
  if (run->exit_code != 0) {
    return UnavailableError("test hosts: `" + ShellJoin(argv) + "` exited " + std::to_string(run->exit_code) +
                                ": " + std::string(Trim(run->err + run->out)),
                            "network namespaces need root and iproute2 (scripts/setup.sh)");
  }
  return Status::Ok();
}

// Best effort, for leftovers and teardown: the outcome does not matter.
void IpQuietly(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOptions options;
  options.timeout_s = 10;
  (void)RunCommand(argv, options);
}

bool IsZombie(pid_t pid) {
  std::string stat = ReadOrEmpty("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return stat.empty() || (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z');
}

std::atomic<int> next_instance{0};

}  // namespace

// --- HostProcess ---

HostProcess::HostProcess(pid_t pid, std::string stdout_path, std::string stderr_path)
    : pid_(pid), stdout_path_(std::move(stdout_path)), stderr_path_(std::move(stderr_path)) {}

HostProcess::HostProcess(HostProcess&& other) noexcept { *this = std::move(other); }

HostProcess& HostProcess::operator=(HostProcess&& other) noexcept {
  if (this != &other) {
    if (started() && !reaped_) {
      Kill(SIGKILL);
      Wait(5);
    }
    pid_ = std::exchange(other.pid_, -1);
    exit_code_ = other.exit_code_;
    reaped_ = other.reaped_;
    stdout_path_ = std::move(other.stdout_path_);
    stderr_path_ = std::move(other.stderr_path_);
  }
  return *this;
}

HostProcess::~HostProcess() {
  if (started() && !reaped_) {
    kill(pid_, SIGKILL);
    Wait(5);
  }
}

int HostProcess::Wait(double timeout_s) {
  if (!started()) return -2;
  if (reaped_) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (done < 0) return -2;
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool HostProcess::Running() { return started() && Wait(0) == -1; }

void HostProcess::Kill(int signal) {
  if (started() && !reaped_) kill(pid_, signal);
}

std::string HostProcess::Out() const { return ReadOrEmpty(stdout_path_); }
std::string HostProcess::Err() const { return ReadOrEmpty(stderr_path_); }

// --- NetnsHosts ---

NetnsHosts::NetnsHosts(int count, int instance) : count_(count), namespace_created_(count + 1, false) {
  std::string pid = std::to_string(getpid());
  std::string k = std::to_string(instance % 100);
  tag_ = pid + "k" + k;
  bridge_ = "pb" + tag_;  // at most 2 + 7 + 1 + 2 = 12 characters (IFNAMSIZ is 16)
  // 10.A.B.0/24 from the pid: distinct for concurrent test processes (and
  // private to our namespaces in any case, since the bridge has no address).
  int value = getpid() % 32768;
  subnet_ = "10." + std::to_string(128 + value / 256) + "." + std::to_string(value % 256) + ".";
}

Result<std::unique_ptr<NetnsHosts>> NetnsHosts::Create(int count) {
  if (count < 1 || count > 99) return UsageError("test hosts: count " + std::to_string(count) + " is not 1..99");
  std::unique_ptr<NetnsHosts> hosts(new NetnsHosts(count, next_instance++));
  Status status = hosts->SetUp();
  if (!status.ok()) return status.error();  // the destructor removes what was made
  return hosts;
}

Status NetnsHosts::SetLink(int host, bool up) const {
  return Ip({"link", "set", Outside(host), up ? "up" : "down"});
}

std::string NetnsHosts::Name(int host) const { return "host" + std::to_string(host); }
std::string NetnsHosts::Address(int host) const { return subnet_ + std::to_string(host); }
std::string NetnsHosts::Namespace(int host) const { return "primus-" + tag_ + "-h" + std::to_string(host); }
// At most 2 + 7 + 1 + 2 + 1 + 2 = 15 characters (IFNAMSIZ is 16 with the NUL).
std::string NetnsHosts::Outside(int host) const { return "pv" + tag_ + "h" + std::to_string(host); }

Status NetnsHosts::SetUp() {
  char pattern[] = "/tmp/primus-netns-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return UnavailableError("test hosts: cannot create a directory under /tmp");
  dir_ = pattern;
  hosts_file_ = dir_ + "/hosts";
  std::string hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (int host = 1; host <= count_; ++host) hosts += Address(host) + "\t" + Name(host) + "\n";
  if (Status written = WriteFileAtomic(hosts_file_, hosts); !written.ok()) return written;

  // Names carry our own (live) pid: anything already there was left by a
  // dead process that had the same pid, and is removed.
  IpQuietly({"link", "del", bridge_});
  for (int host = 1; host <= count_; ++host) {
    IpQuietly({"link", "del", Outside(host)});
    if (PathExists("/run/netns/" + Namespace(host))) IpQuietly({"netns", "del", Namespace(host)});
  }

  if (Status s = Ip({"link", "add", bridge_, "type", "bridge"}); !s.ok()) return s;
  bridge_created_ = true;
  if (Status s = Ip({"link", "set", bridge_, "up"}); !s.ok()) return s;
  for (int host = 1; host <= count_; ++host) {
    std::string ns = Namespace(host);
    std::string outside = Outside(host);
    if (Status s = Ip({"netns", "add", ns}); !s.ok()) return s;
    namespace_created_[host] = true;
    for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
             {"link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ns},
             {"link", "set", outside, "master", bridge_},
             {"link", "set", outside, "up"},
             {"-n", ns, "addr", "add", Address(host) + "/24", "dev", "eth0"},
             {"-n", ns, "link", "set", "eth0", "up"},
             {"-n", ns, "link", "set", "lo", "up"},
         }) {
      if (Status s = Ip(step); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

NetnsHosts::~NetnsHosts() { TearDown(); }

void NetnsHosts::TearDown() {
  // Whatever still runs inside our namespaces was started through this
  // fixture (nobody else enters them): kill it, and wait until it is gone.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    bool any = false;
    for (int host = 1; host <= count_; ++host) {
      if (!namespace_created_[host]) continue;
      for (pid_t pid : ProcessesOn(host)) {
        kill(pid, SIGKILL);
        any = true;
      }
    }
    if (!any || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int host = 1; host <= count_; ++host) {
    if (!namespace_created_[host]) continue;
    // Deleting one end of a veth deletes the pair at once; the namespace's
    // own cleanup (which would take eth0 and its peer along) runs later in
    // the kernel, asynchronously.
    IpQuietly({"link", "del", Outside(host)});
    IpQuietly({"netns", "del", Namespace(host)});
    namespace_created_[host] = false;
  }
  if (bridge_created_) IpQuietly({"link", "del", bridge_});
  bridge_created_ = false;
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::vector<std::string> NetnsHosts::Command(int host, const std::vector<std::string>& argv) const {
  std::vector<std::string> command = {
      "nsenter", "--net=/run/netns/" + Namespace(host), "unshare", "--uts", "--mount", "--propagation", "private",
      "sh", "-c",
      "hostname " + Name(host) + " && mount --bind " + ShellQuote(hosts_file_) + " /etc/hosts && exec \"$@\"",
      Name(host)};
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

HostProcess NetnsHosts::Start(int host, const std::vector<std::string>& argv, const ProcessOptions& options) {
  std::string base = dir_ + "/" + Name(host) + "." + std::to_string(++started_);
  pid_t pid = StartProcess(Command(host, argv), base + ".out", base + ".err", options);
  return HostProcess(pid, base + ".out", base + ".err");
}

ProcessResult NetnsHosts::Run(int host, const std::vector<std::string>& argv, const ProcessOptions& options) const {
  return RunProcess(Command(host, argv), options);
}

std::vector<pid_t> NetnsHosts::ProcessesOn(int host) const {
  std::vector<pid_t> found;
  struct stat target;
  if (stat(("/run/netns/" + Namespace(host)).c_str(), &target) != 0) return found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    auto pid = ParseInt(entry->d_name);
    if (!pid) continue;
    struct stat net;
    std::string link = std::string("/proc/") + entry->d_name + "/ns/net";
    if (stat(link.c_str(), &net) != 0 || net.st_ino != target.st_ino || net.st_dev != target.st_dev) continue;
    if (IsZombie(static_cast<pid_t>(*pid))) continue;
    found.push_back(static_cast<pid_t>(*pid));
  }
  closedir(proc);
  return found;
}

}  // namespace primus::testing
