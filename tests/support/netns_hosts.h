// Test support: N "hosts" on this one machine for multi-node tests. Each host
// is a network namespace with eth0 at 10.A.B.<i>/24 and lo up, the hosts
// joined by a Linux bridge; a process started on host i also gets the host
// name "host<i>" (its own UTS namespace) and an /etc/hosts naming every host
// (bind-mounted in its own mount namespace), so node agents see distinct
// hosts, addresses and names exactly as on a real cluster. The PID namespace
// is shared: the test sees every process by its pid.
//
// Names carry the test process's pid (namespaces primus-<pid>k<k>-h<i>,
// bridge pb<pid>k<k>), so test binaries running in parallel never meet. The
// bridge has no address of its own, so the subnet lives only inside our
// namespaces and cannot clash with another fixture's or the machine's.
//
// Teardown (the destructor, also after a failed assertion) SIGKILLs every
// process still inside our namespaces (nothing else can be there: only this
// fixture enters them), then deletes the namespaces, the bridge and the files.
// Creation needs root and iproute2; it fails loudly rather than skipping.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "run_process.h"
#include "util/error.h"

namespace primus::testing {

// A process started on one host. Its pid is the command's own (nsenter,
// unshare and sh exec into it), so signals reach the command itself. stdout
// and stderr go to files (a process that outlives its parent cannot hold the
// test's pipes open). The destructor SIGKILLs and reaps it if it still runs.
class HostProcess {
 public:
  HostProcess(pid_t pid, std::string stdout_path, std::string stderr_path);
  HostProcess(HostProcess&& other) noexcept;
  HostProcess& operator=(HostProcess&& other) noexcept;
  HostProcess(const HostProcess&) = delete;
  HostProcess& operator=(const HostProcess&) = delete;
  ~HostProcess();

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }

  // The exit status (128+N when killed by signal N), or -1 when it is still
  // running after `timeout_s` (it is left running). Once reaped, the status
  // is remembered: calling again returns it at once.
  int Wait(double timeout_s);
  bool Running();
  void Kill(int signal);

  const std::string& stdout_path() const { return stdout_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  std::string Out() const;
  std::string Err() const;
  std::string All() const { return Out() + Err(); }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  bool reaped_ = false;
  std::string stdout_path_;
  std::string stderr_path_;
};

class NetnsHosts {
 public:
  // `count` hosts (1..99), host1..host<count>. An error (exit code 4) names
  // the `ip` command that failed and its output.
  static Result<std::unique_ptr<NetnsHosts>> Create(int count);
  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  // Hosts are numbered from 1, like their names.
  int count() const { return count_; }
  std::string Name(int host) const;       // "host2"
  std::string Address(int host) const;    // "10.A.B.2"
  std::string Namespace(int host) const;  // the name under /run/netns
  const std::string& hosts_file() const { return hosts_file_; }
  // A scratch directory of this fixture (removed at teardown), for the
  // tests' own files.
  const std::string& dir() const { return dir_; }

  // `argv` wrapped so that it runs on `host`: nsenter into its network
  // namespace, unshare UTS and mount namespaces, set the host name,
  // bind-mount the hosts file on /etc/hosts, exec argv.
  std::vector<std::string> Command(int host, const std::vector<std::string>& argv) const;

  // Starts argv on `host` (env, clear_env and cwd from `options`), stdout
  // and stderr to files in dir(). Check started() on the result.
  HostProcess Start(int host, const std::vector<std::string>& argv, const ProcessOptions& options = {});
  // Runs argv on `host` to completion (options.timeout_s applies).
  ProcessResult Run(int host, const std::vector<std::string>& argv, const ProcessOptions& options = {}) const;

  // Live (non-zombie) processes inside `host`'s network namespace.
  std::vector<pid_t> ProcessesOn(int host) const;

  // Cuts `host` off the bridge (its cable pulled: no FIN, no RST, packets
  // vanish) or plugs it back in.
  Status SetLink(int host, bool up) const;

 private:
  NetnsHosts(int count, int instance);
  Status SetUp();
  void TearDown();
  std::string Outside(int host) const;  // the veth end on the bridge

  int count_;
  std::string tag_;  // "<pid>-<k>" or "<pid>k<k>" parts of the names
  std::string bridge_;
  std::string subnet_;  // "10.A.B."
  std::string dir_;
  std::string hosts_file_;
  bool bridge_created_ = false;
  std::vector<bool> namespace_created_;
  int started_ = 0;  // processes started, for unique output file names
};

}  // namespace primus::testing
