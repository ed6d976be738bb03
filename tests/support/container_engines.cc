#include "container_engines.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace fs = std::filesystem;
namespace {

// The shared libraries `binary` loads (ldd's absolute paths).
std::vector<std::string> LibrariesOf(const std::string& binary) {
  ProcessResult ldd = RunProcess({"ldd", binary});
  std::vector<std::string> libraries;
  for (const std::string& line : Split(ldd.out, '\n')) {
    for (const std::string& word : Split(std::string(Trim(line)), ' ')) {
      if (word.starts_with("/")) libraries.push_back(word);
    }
  }
  return libraries;
}

// Copies a host file to the same path under `root`, following symlinks.
std::string CopyIn(const std::string& host_path, const std::string& root, const std::string& as = "") {
  std::error_code error;
  fs::path target = fs::path(root) / fs::path(as.empty() ? host_path : as).relative_path();
  fs::create_directories(target.parent_path(), error);
  fs::copy_file(host_path, target, fs::copy_options::overwrite_existing, error);
  return error ? "cannot copy " + host_path + ": " + error.message() : "";
}

std::string Skeleton(const std::string& root) {
  std::error_code error;
  for (const char* dir : {"etc", "tmp", "proc", "sys", "dev", "root", "run"}) fs::create_directories(fs::path(root) / dir, error);
  fs::permissions(fs::path(root) / "tmp", fs::perms::all | fs::perms::sticky_bit, error);
  std::ofstream(fs::path(root) / "etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n";
  std::ofstream(fs::path(root) / "etc/group") << "root:x:0:\nvideo:x:44:\n";
  return error ? "cannot build " + root + ": " + error.message() : "";
}

bool IsMountPoint(const std::string& path) {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    std::vector<std::string> fields = Split(line, ' ');
    if (fields.size() > 4 && fields[4] == path) return true;
  }
  return false;
}

// Mount points at or below `dir`, deepest first.
std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> found;
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    std::vector<std::string> fields = Split(line, ' ');
    if (fields.size() > 4 && (fields[4] == dir || fields[4].starts_with(dir + "/"))) found.push_back(fields[4]);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return found;
}

// Podman on a hybrid-cgroup machine: "crun: cgroups in hybrid mode not
// supported, drop all controllers from cgroupv2" until hugetlb has a v1
// hierarchy of its own.
std::string EnsureHugetlbHierarchy() {
  if (!IsDirectory("/sys/fs/cgroup/unified") || IsMountPoint("/sys/fs/cgroup/hugetlb")) return "";
  mkdir("/sys/fs/cgroup/hugetlb", 0755);
  if (mount("cgroup", "/sys/fs/cgroup/hugetlb", "cgroup", 0, "hugetlb") != 0 && !IsMountPoint("/sys/fs/cgroup/hugetlb")) {
    return std::string("cannot mount the hugetlb cgroup hierarchy: ") + strerror(errno);
  }
  return "";
}

std::string MakeTempDir(const char* tag) {
  std::string pattern = std::string("/tmp/primus-") + tag + "-XXXXXX";
  return mkdtemp(pattern.data()) ? pattern : "";
}

std::string Import(const std::string& engine, const EnvOverrides& env, RootfsKind kind, const std::string& image) {
  std::string root = MakeTempDir("rootfs");
  std::string error = BuildRootfs(kind, root);
  if (error.empty()) {
    ProcessOptions options;
    options.env = env;
    options.timeout_s = 120;
    ProcessResult result = RunProcess({"sh", "-c", "tar -C \"$0\" -c . | " + engine + " import - \"$1\"", root, image}, options);
    if (result.exit_code != 0) error = engine + " import " + image + " failed: " + result.all();
  }
  std::error_code ignored;
  fs::remove_all(root, ignored);
  return error;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (const std::string& line : Split(text, '\n')) {
    if (!Trim(line).empty()) lines.emplace_back(Trim(line));
  }
  return lines;
}

}  // namespace

std::string BuildRootfs(RootfsKind kind, const std::string& dir) {
  if (std::string error = Skeleton(dir); !error.empty()) return error;
  std::error_code error;
  if (kind == RootfsKind::kEmptyUsr) {
    fs::create_directories(fs::path(dir) / "usr", error);
    for (const char* link : {"bin", "lib", "lib64", "sbin"}) {
      fs::create_directory_symlink(std::string("usr/") + link, fs::path(dir) / link, error);
    }
    return error ? "cannot build " + dir + ": " + error.message() : "";
  }
  if (kind == RootfsKind::kOldGlibc) {
    for (const std::string& library : LibrariesOf(PRIMUS_BINARY)) {
      std::string name = fs::path(library).filename();
      bool fake = name == "libc.so.6" || name == "libm.so.6";
      if (std::string failed = CopyIn(fake ? PRIMUS_FAKE_OLD_LIBC : library, dir, library); !failed.empty()) return failed;
    }
    return "";
  }
  std::vector<std::string> binaries;
  for (const char* tool : {"sh", "dash", "true", "false", "cat", "echo", "env", "sleep", "ls", "printf", "pwd", "id"}) {
    std::string path = "/usr/bin/" + std::string(tool);
    if (!IsExecutableFile(path)) path = "/bin/" + std::string(tool);
    if (!IsExecutableFile(path)) return "no " + std::string(tool) + " on this host";
    if (std::string failed = CopyIn(path, dir, "/bin/" + std::string(tool)); !failed.empty()) return failed;
    binaries.push_back(path);
  }
  binaries.push_back(PRIMUS_BINARY);
  for (const std::string& binary : binaries) {
    for (const std::string& library : LibrariesOf(binary)) {
      if (std::string failed = CopyIn(library, dir); !failed.empty()) return failed;
    }
  }
  return "";
}

std::vector<std::string> UsrMounts() {
  return {"-v", "/usr:/usr:ro", "-v", "/etc/alternatives:/etc/alternatives:ro", "-v", "/etc/ld.so.cache:/etc/ld.so.cache:ro"};
}

namespace {

template <typename Match>
std::vector<pid_t> Processes(Match match) {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = static_cast<pid_t>(atoi(entry->d_name));
    if (pid <= 0 || pid == getpid()) continue;
    // A process may exit while we read: ReadFile reports that as an error.
    Result<std::string> cmdline = ReadFile("/proc/" + std::string(entry->d_name) + "/cmdline");
    if (!cmdline.ok()) continue;
    std::replace(cmdline->begin(), cmdline->end(), '\0', ' ');
    if (match(*cmdline)) pids.push_back(pid);
  }
  closedir(proc);
  return pids;
}

}  // namespace

std::vector<pid_t> ProcessesStartingWith(const std::string& prefix) {
  return Processes([&](const std::string& cmdline) { return cmdline.starts_with(prefix); });
}

std::vector<pid_t> ProcessesMentioning(const std::string& needle) {
  return Processes([&](const std::string& cmdline) { return cmdline.find(needle) != std::string::npos; });
}

// ---------------------------------------------------------------- podman

std::string PodmanStore::Unavailable() {
  if (getuid() != 0) return "podman tests need root";
  for (const char* tool : {"podman", "crun"}) {
    if (FindExecutable(tool).empty()) return std::string(tool) + " is not installed (scripts/setup.sh installs it)";
  }
  return "";
}

std::unique_ptr<PodmanStore> PodmanStore::Start(std::string* error) {
  if (*error = Unavailable(); !error->empty()) return nullptr;
  if (*error = EnsureHugetlbHierarchy(); !error->empty()) return nullptr;
  std::unique_ptr<PodmanStore> store(new PodmanStore());
  store->dir_ = MakeTempDir("podman");
  std::ofstream(store->dir_ + "/storage.conf") << "[storage]\ndriver = \"vfs\"\ngraphroot = \"" << store->dir_
                                               << "/graph\"\nrunroot = \"" << store->dir_ << "/run\"\n";
  ProcessResult info = store->Client({"info", "--format", "{{.Store.GraphRoot}}"});
  if (info.exit_code != 0 || info.out.find(store->dir_) == std::string::npos) {
    *error = "podman does not use the private store: " + info.all();
    return nullptr;
  }
  return store;
}

PodmanStore::~PodmanStore() {
  // Everything in this store is the test's own.
  for (const std::string& name : ContainerNames()) Client({"rm", "-f", "-t", "0", name});
  for (const std::string& mount : MountsUnder(dir_)) umount2(mount.c_str(), MNT_DETACH);
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

EnvOverrides PodmanStore::Environment() const {
  return {{"CONTAINERS_STORAGE_CONF", dir_ + "/storage.conf"}, {"DOCKER_HOST", std::nullopt}};
}

ProcessResult PodmanStore::Client(const std::vector<std::string>& args, double timeout_s) const {
  std::vector<std::string> argv = {"podman"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.env = Environment();
  options.timeout_s = timeout_s;
  return RunProcess(argv, options);
}

std::string PodmanStore::ImportImage(RootfsKind kind, const std::string& image) const {
  return Import("podman", Environment(), kind, image);
}

std::vector<std::string> PodmanStore::ContainerNames() const {
  return Lines(Client({"ps", "-a", "--format", "{{.Names}}"}).out);
}

// ---------------------------------------------------------------- docker

std::string DockerDaemon::Unavailable() {
  if (getuid() != 0) return "docker tests need root";
  for (const char* tool : {"dockerd", "docker"}) {
    if (FindExecutable(tool).empty()) return std::string(tool) + " is not installed (scripts/setup.sh installs docker.io)";
  }
  return "";
}

std::unique_ptr<DockerDaemon> DockerDaemon::Start(std::string* error) {
  if (*error = Unavailable(); !error->empty()) return nullptr;
  std::unique_ptr<DockerDaemon> daemon(new DockerDaemon());
  daemon->dir_ = MakeTempDir("dockerd");
  const std::string& dir = daemon->dir_;
  std::vector<std::string> argv = {FindExecutable("dockerd"), "--iptables=false", "--ip6tables=false", "--bridge=none",
                                   "--storage-driver=vfs", "--data-root=" + dir + "/data", "--exec-root=" + dir + "/exec",
                                   "--pidfile=" + dir + "/dockerd.pid", "-H", "unix://" + dir + "/docker.sock"};
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  std::string log = dir + "/dockerd.log";
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlives the test
    if (getppid() != parent) _exit(1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    setsid();
    execv(args[0], args.data());
    _exit(127);
  }
  daemon->pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (daemon->Client({"version", "--format", "{{.Server.Version}}"}, 5).exit_code == 0) return daemon;
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      daemon->pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto text = ReadFile(log);
  *error = "dockerd did not start: " + (text.ok() ? *text : std::string());
  return nullptr;
}

void DockerDaemon::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (waitpid(pid_, nullptr, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  for (const std::string& mount : MountsUnder(dir_)) umount2(mount.c_str(), MNT_DETACH);
}

DockerDaemon::~DockerDaemon() {
  for (const std::string& name : ContainerNames()) Client({"rm", "-f", name});
  Stop();
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

EnvOverrides DockerDaemon::Environment() const { return {{"DOCKER_HOST", "unix://" + dir_ + "/docker.sock"}}; }

ProcessResult DockerDaemon::Client(const std::vector<std::string>& args, double timeout_s) const {
  std::vector<std::string> argv = {"docker"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.env = Environment();
  options.timeout_s = timeout_s;
  return RunProcess(argv, options);
}

std::string DockerDaemon::ImportImage(RootfsKind kind, const std::string& image) const {
  return Import("docker", Environment(), kind, image);
}

std::vector<std::string> DockerDaemon::ContainerNames() const {
  return Lines(Client({"ps", "-a", "--format", "{{.Names}}"}).out);
}

}  // namespace primus::testing
