// Test support: real container engines on this machine, private to the test
// (docs: /work/shared/reference/test-infra.md), and images built from local
// files (no registry, no network).
//
// PodmanStore: podman with a storage directory of its own (a
// CONTAINERS_STORAGE_CONF naming a vfs graph root and run root under a
// fresh directory), so its images and containers are only the test's:
// `podman ps -a` through Environment() lists nothing else, and the
// destructor removes what is left there, then the directory. Podman needs a
// hugetlb cgroup v1 hierarchy on these hybrid-cgroup machines; Start()
// mounts it when missing and leaves it (a machine-wide fix other engines
// rely on too, not a process).
//
// DockerDaemon: a dockerd of its own (vfs storage, data and exec roots and
// socket under a fresh directory, no iptables and no default bridge, so it
// touches no network configuration), reached through DOCKER_HOST. The
// destructor stops it by its pid, unmounts what it mounted under its exec
// root and removes the directory.
//
// Images: BuildRootfs writes a root filesystem directory, ImportImage turns
// it into an image with `<engine> import`:
//   kMini       a shell, coreutils and the glibc libraries primus-cli needs (~4 MB)
//   kEmptyUsr   a merged-/usr skeleton (bin -> usr/bin ...): run it with the
//               host's /usr mounted (UsrMounts()) to get the host's python3
//               and torch inside
//   kOldGlibc   the loader and a libc.so.6 / libm.so.6 that define only
//               GLIBC_2.2.5: an image "too old" for primus-cli
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run_process.h"

namespace primus::testing {

using EnvOverrides = std::map<std::string, std::optional<std::string>>;

enum class RootfsKind { kMini, kEmptyUsr, kOldGlibc };

// "" when built, else what failed.
std::string BuildRootfs(RootfsKind kind, const std::string& dir);

// The -v flags that make kEmptyUsr run the host's programs.
std::vector<std::string> UsrMounts();

class PodmanStore {
 public:
  // Why podman cannot run here; "" when it can.
  static std::string Unavailable();
  static std::unique_ptr<PodmanStore> Start(std::string* error);
  ~PodmanStore();
  PodmanStore(const PodmanStore&) = delete;
  PodmanStore& operator=(const PodmanStore&) = delete;

  // For podman and for primus-cli: CONTAINERS_STORAGE_CONF set, DOCKER_HOST
  // unset (so `auto` picks podman).
  EnvOverrides Environment() const;
  ProcessResult Client(const std::vector<std::string>& args, double timeout_s = 60) const;
  // `podman import` of a BuildRootfs directory; "" or what failed.
  std::string ImportImage(RootfsKind kind, const std::string& image) const;
  // Names of the containers in this store (all states).
  std::vector<std::string> ContainerNames() const;
  const std::string& dir() const { return dir_; }

 private:
  PodmanStore() = default;
  std::string dir_;
};

class DockerDaemon {
 public:
  static std::string Unavailable();
  static std::unique_ptr<DockerDaemon> Start(std::string* error);
  ~DockerDaemon();
  DockerDaemon(const DockerDaemon&) = delete;
  DockerDaemon& operator=(const DockerDaemon&) = delete;

  // DOCKER_HOST=unix://<dir>/docker.sock.
  EnvOverrides Environment() const;
  ProcessResult Client(const std::vector<std::string>& args, double timeout_s = 60) const;
  std::string ImportImage(RootfsKind kind, const std::string& image) const;
  std::vector<std::string> ContainerNames() const;

 private:
  DockerDaemon() = default;
  void Stop();
  std::string dir_;
  pid_t pid_ = -1;
};

// Pids of live processes whose command line (arguments joined by spaces)
// starts with `prefix`, or contains `needle`.
std::vector<pid_t> ProcessesStartingWith(const std::string& prefix);
std::vector<pid_t> ProcessesMentioning(const std::string& needle);

}  // namespace primus::testing
