// `primus-cli ssh` against real OpenSSH servers: every "host" is a network
// namespace (tests/support/netns_hosts.h) running Debian's sshd with this
// test's own configuration, host key and authorized keys (no system file is
// touched); the client is the system's ssh with a configuration file given
// by -F, the way a user's ~/.ssh/config would. The launcher runs on host1,
// like mpirun on a cluster's first node.
//
//   SshLaunchTest    arguments through ssh unchanged (spaces, quotes, $(),
//                    line breaks), the token never on a command line, the
//                    binary copied to a host that lacks it, the host checks
//                    listing every broken host in one error, a host reached
//                    only through a jump host (ProxyJump), a host with too
//                    old a glibc, Ctrl-C (during the host checks too), a
//                    dropped connection. Seconds each. Each host's root has
//                    a home of its own (no startup file of /root is read).
//   SshTrainTest     3-host gloo DDP: train pretrain of examples/gpt; a bad
//                    host (the hang's culprit) replaced by the hostfile's
//                    spare under direct.exclude_bad_nodes (slow).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "container_engines.h"
#include "netns_hosts.h"
#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::HostProcess;
using testing::NetnsHosts;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;
using testing::RunProcess;
using testing::SecondsSince;
using testing::WaitFor;
using Clock = std::chrono::steady_clock;

// Options that run a command in `dir`.
ProcessOptions InDir(const std::string& dir) {
  ProcessOptions options;
  options.cwd = dir;
  return options;
}

const std::string kSource = PRIMUS_SOURCE_DIR;

std::string CmdLine(pid_t pid) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  return text.ok() ? *text : "";
}

std::string Comm(pid_t pid) {
  auto text = ReadFile("/proc/" + std::to_string(pid) + "/comm");
  return text.ok() ? std::string(Trim(*text)) : "";
}

class SshLaunchTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!scratch_.empty()) std::filesystem::remove_all(scratch_);
    if (HasFailure()) {
      for (const HostProcess* process : shown_) {
        fprintf(stderr, "==== %s\n%s\n", process->stdout_path().c_str(), process->All().c_str());
      }
    }
  }

  // `count` hosts, each with an sshd; `refuse` hosts accept no key, `down`
  // hosts run no sshd. `hide` (a directory) is empty on hosts in `hidden_on`.
  void MakeHosts(int count, std::vector<int> refuse = {}, std::vector<int> down = {}, std::string hide = "",
                 std::vector<int> hidden_on = {}) {
    auto hosts = NetnsHosts::Create(count);
    ASSERT_TRUE(hosts.ok()) << hosts.error().Format();
    hosts_ = std::move(*hosts);
    const std::string& dir = hosts_->dir();
    ASSERT_EQ(RunProcess({"sh", "-c", "mkdir -p /run/sshd && ssh-keygen -q -t ed25519 -N '' -f hostkey && "
                                      "ssh-keygen -q -t ed25519 -N '' -f userkey && : > no_keys"},
                         InDir(dir))
                  .exit_code,
              0);
    std::string config = fmt::format(
        "Host *\n  IdentityFile {0}/userkey\n  IdentitiesOnly yes\n  User root\n"
        "  UserKnownHostsFile {0}/known_hosts\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
        dir);
    ASSERT_TRUE(WriteFileAtomic(dir + "/ssh_config", config).ok());
    for (const auto& [a, b] : private_links_) {
      // eth1 on both hosts, a veth pair of their own: 10.127.P.<host>/24, an
      // address no other host has a route to.
      for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
               {"link", "add", "name", "eth1", "netns", hosts_->Namespace(a), "type", "veth", "peer", "name", "eth1",
                "netns", hosts_->Namespace(b)},
               {"-n", hosts_->Namespace(a), "addr", "add", PrivateAddress(a) + "/24", "dev", "eth1"},
               {"-n", hosts_->Namespace(b), "addr", "add", PrivateAddress(b) + "/24", "dev", "eth1"},
               {"-n", hosts_->Namespace(a), "link", "set", "eth1", "up"},
               {"-n", hosts_->Namespace(b), "link", "set", "eth1", "up"},
           }) {
        std::vector<std::string> argv = {"ip"};
        argv.insert(argv.end(), step.begin(), step.end());
        ProcessResult result = RunProcess(argv);
        ASSERT_EQ(result.exit_code, 0) << ShellJoin(argv) << ": " << result.all();
      }
    }
    // Every host's root has a home of its own (an /etc/passwd of the host's
    // own, bind-mounted in its mount namespace): logins read no startup file
    // of the machine's /root (a ~/.bashrc that runs `pyenv rehash` would take
    // a lock there that a test's teardown can leave stale), only login_rc_.
    Result<std::string> passwd = ReadFile("/etc/passwd");
    ASSERT_TRUE(passwd.ok()) << passwd.error().Format();
    for (int host = 1; host <= count; ++host) {
      std::string home = fmt::format("{}/home-host{}", dir, host);
      ASSERT_TRUE(MakeDirs(home).ok());
      if (auto rc = login_rc_.find(host); rc != login_rc_.end()) {
        ASSERT_TRUE(WriteFileAtomic(home + "/.bashrc", rc->second).ok());
      }
      std::string text;
      for (const std::string& line : Split(*passwd, '\n')) {
        std::vector<std::string> fields = Split(line, ':');
        if (fields.size() == 7 && fields[0] == "root") fields[5] = home, fields[6] = "/bin/bash";
        if (!line.empty()) text += Join(fields, ":") + "\n";
      }
      ASSERT_TRUE(WriteFileAtomic(fmt::format("{}/passwd-host{}", dir, host), text).ok());
    }
    for (int host = 1; host <= count; ++host) {
      if (std::find(down.begin(), down.end(), host) != down.end()) continue;
      bool refused = std::find(refuse.begin(), refuse.end(), host) != refuse.end();
      auto private_address = listen_.find(host);
      std::string listen = private_address != listen_.end() ? private_address->second : hosts_->Address(host);
      std::string sshd_config = fmt::format(
          "ListenAddress {1}:22\nHostKey {0}/hostkey\nAuthorizedKeysFile {0}/{2}\nPasswordAuthentication no\n"
          "KbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
          "PidFile {0}/sshd{3}.pid\nSetEnv XDG_CACHE_HOME={0}/cache-host{3}{4}\n",
          dir, listen, refused ? "no_keys" : "userkey.pub", host, sshd_env_);
      std::string path = fmt::format("{}/sshd{}_config", dir, host);
      ASSERT_TRUE(WriteFileAtomic(path, sshd_config).ok());
      std::string start = "exec /usr/sbin/sshd -D -e -f " + path;
      if (std::find(hidden_on.begin(), hidden_on.end(), host) != hidden_on.end()) {
        start = "mount -t tmpfs tmpfs " + hide + " && " + start;
      }
      if (auto setup = before_sshd_.find(host); setup != before_sshd_.end()) start = setup->second + " && " + start;
      start = fmt::format("mount --bind {}/passwd-host{} /etc/passwd && {}", dir, host, start);
      sshd_.push_back(hosts_->Start(host, {"/bin/sh", "-c", start}));
      ASSERT_TRUE(sshd_.back().started());
    }
    // Every sshd listens before the launch.
    for (int host = 1; host <= count; ++host) {
      if (std::find(down.begin(), down.end(), host) != down.end()) continue;
      ASSERT_TRUE(WaitFor([&] { return PathExists(fmt::format("{}/sshd{}.pid", dir, host)); }, 10)) << host;
    }
  }

  // Two hosts; `old_host` answers `getconf GNU_LIBC_VERSION` with "glibc 2.17":
  // its own getconf is a script bind-mounted over the real one.
  void MakeHostsWithOldGlibcOn(int old_host) {
    char pattern[] = "/tmp/primus-ssh-getconf-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    scratch_ = pattern;
    std::string fake = scratch_ + "/getconf";
    ASSERT_TRUE(WriteFileAtomic(fake, "#!/bin/sh\n[ \"$1\" = GNU_LIBC_VERSION ] && exec echo glibc 2.17\nexit 1\n").ok());
    ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
    std::string real(Trim(RunProcess({"sh", "-c", "command -v getconf"}).out));
    ASSERT_FALSE(real.empty());
    before_sshd_[old_host] = "mount --bind " + fake + " " + real;
    MakeHosts(2);
  }

  std::string Hostfile(const std::string& text) { return Write("hostfile", text); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = hosts_->dir() + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  // primus-cli ssh on host1, -F our client configuration.
  HostProcess Launch(const std::vector<std::string>& ssh_flags, const std::vector<std::string>& task,
                     ProcessOptions options = {}, const std::string& binary = PRIMUS_BINARY) {
    std::vector<std::string> argv = {binary, "ssh", "-F", hosts_->dir() + "/ssh_config"};
    argv.insert(argv.end(), ssh_flags.begin(), ssh_flags.end());
    argv.push_back("--");
    argv.insert(argv.end(), task.begin(), task.end());
    if (options.cwd.empty()) options.cwd = hosts_->dir();
    options.env["HOME"] = hosts_->dir();
    options.env["NO_COLOR"] = "1";
    HostProcess process = hosts_->Start(1, argv, options);
    EXPECT_TRUE(process.started());
    return process;
  }
  HostProcess* Keep(HostProcess process) {
    launched_.push_back(std::make_unique<HostProcess>(std::move(process)));
    shown_.push_back(launched_.back().get());
    return launched_.back().get();
  }

  // Processes on `host` whose command line holds `needle`.
  std::vector<pid_t> Matching(int host, const std::string& needle) {
    std::vector<pid_t> out;
    for (pid_t pid : hosts_->ProcessesOn(host)) {
      if (CmdLine(pid).find(needle) != std::string::npos) out.push_back(pid);
    }
    return out;
  }
  // Worker processes named `comm` on every host.
  size_t Workers(const std::string& comm) {
    size_t n = 0;
    for (int host = 1; host <= hosts_->count(); ++host) {
      for (pid_t pid : hosts_->ProcessesOn(host)) n += Comm(pid) == comm;
    }
    return n;
  }
  size_t MatchingAnywhere(const std::string& needle) {
    size_t n = 0;
    for (int host = 1; host <= hosts_->count(); ++host) n += Matching(host, needle).size();
    return n;
  }

  // Set before MakeHosts: host pairs joined by a link of their own (eth1 at
  // PrivateAddress, a subnet no other host has a route to), and hosts whose
  // sshd listens only on the given address.
  std::vector<std::pair<int, int>> private_links_;
  std::map<int, std::string> listen_;
  // Set before MakeHosts: a shell command run on the host (in its own mount
  // namespace) before its sshd starts.
  std::map<int, std::string> before_sshd_;
  // Set before MakeHosts: the ~/.bashrc of root on a host (bash reads it for
  // every ssh login, commands included).
  std::map<int, std::string> login_rc_;
  // Set before MakeHosts: " NAME=VALUE ..." for every login's environment (sshd's SetEnv).
  std::string sshd_env_;
  std::string scratch_;  // a directory of the test's own, removed at teardown
  static std::string PrivateAddress(int host) { return fmt::format("10.127.{}.{}", ::getpid() % 256, host); }

  std::unique_ptr<NetnsHosts> hosts_;
  std::vector<HostProcess> sshd_;
  std::vector<std::unique_ptr<HostProcess>> launched_;
  std::vector<const HostProcess*> shown_;
};

// The worker prints its arguments, rank and two variables as JSON.
const char kEcho[] =
    "import json, os, sys\n"
    "print(json.dumps({'rank': os.environ['RANK'], 'world': os.environ['WORLD_SIZE'], 'args': sys.argv[1:],\n"
    "                  'x': os.environ.get('X'), 'y': os.environ.get('Y'), 'token': 'PRIMUS_JOB_TOKEN' in os.environ}))\n";

TEST_F(SshLaunchTest, ArgumentsReachEveryHostUnchangedAndTheTokenStaysOffCommandLines) {
  MakeHosts(3);
  std::string script = Write("echo.py", kEcho + std::string("import time; time.sleep(1.5)\n"));
  std::vector<std::string> nasty = {"with space", "it's", "\"dq\"", "$(touch /tmp/primus-ssh-test-pwned)", "`id`",
                                    "$HOME", "line\nbreak", "*", "", "a;b|c&d", "--not-a-flag"};
  std::vector<std::string> task = {"run", "/usr/bin/python3", script};
  task.insert(task.end(), nasty.begin(), nasty.end());
  ProcessOptions options;
  options.env["PRIMUS_JOB_TOKEN"] = "5ec12e7700112233445566778899aabb";
  options.env["Y"] = "by name: $(x) 'q'";
  HostProcess* launcher =
      Keep(Launch({"--hostfile", Hostfile("# three hosts\nhost1 slots=1\nhost2:1\nhost3 slots=1 max_slots=4\n"),
                   "--env", "X=a b 'c' $(d)", "--env", "Y"},
                  task, options));
  // While the job runs, no process anywhere shows the token.
  ASSERT_TRUE(WaitFor([&] { return MatchingAnywhere(script) >= 3; }, 30)) << launcher->All();
  for (int host = 1; host <= 3; ++host) {
    for (pid_t pid : hosts_->ProcessesOn(host)) {
      EXPECT_EQ(CmdLine(pid).find("5ec12e77"), std::string::npos) << host << ": " << CmdLine(pid);
    }
  }
  ASSERT_EQ(launcher->Wait(60), 0) << launcher->All();
  std::string out = launcher->Out();
  for (int rank = 0; rank < 3; ++rank) {
    std::string prefix = fmt::format("[host{}:{}] ", rank + 1, rank);
    size_t at = out.find(prefix + "{");
    ASSERT_NE(at, std::string::npos) << out;
    std::string line = out.substr(at + prefix.size(), out.find('\n', at) - at - prefix.size());
    // json.dumps of the exact strings (a line break is \n, a quote \")
    const std::string args = R"J("args": ["with space", "it's", "\"dq\"", "$(touch /tmp/primus-ssh-test-pwned)", "`id`", "$HOME", "line\nbreak", "*", "", "a;b|c&d", "--not-a-flag"])J";
    const std::string env = R"J("x": "a b 'c' $(d)", "y": "by name: $(x) 'q'", "token": false)J";
    EXPECT_NE(line.find(args), std::string::npos) << line;
    EXPECT_NE(line.find(env), std::string::npos) << line;
    EXPECT_NE(line.find(fmt::format(R"("rank": "{}", "world": "3")", rank)), std::string::npos) << line;
  }
  EXPECT_FALSE(PathExists("/tmp/primus-ssh-test-pwned"));
}

TEST_F(SshLaunchTest, DryRunShowsEachHostsSshCommand) {
  MakeHosts(1);
  ProcessResult result = RunPrimus({"ssh", "--hosts", "node[1-2]", "-J", "jump", "--dry-run", "--", "run", "echo", "a b"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("node 0: ssh -o BatchMode=yes -J jump -o ConnectTimeout=10"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("node1 -- 'cd -- "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("'\\''direct'\\'' '\\''--nnodes'\\'' '\\''2'\\'' '\\''--node-rank'\\'' '\\''1'\\''"),
            std::string::npos)
      << result.out;
}

TEST_F(SshLaunchTest, DryRunShowsTheContainerInvocationOnEachHost) {
  MakeHosts(1);
  ProcessResult result = RunPrimus({"ssh", "--hosts", "node[1-2]", "--dry-run", "--", "container", "--image", "local/x",
                                    "--pull", "never", "--", "direct", "--max-restarts", "1", "--", "run", "echo", "a b"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  auto word = [](const std::string& text) { return "'\\''" + text + "'\\''"; };
  std::string node1 = Join(std::vector<std::string>{word("container"), word("--image"), word("local/x"), word("--pull"),
                                                    word("never"), word("--"), word("direct"), word("--nnodes"),
                                                    word("2"), word("--node-rank"), word("1")},
                           " ");
  EXPECT_NE(result.out.find("node 1: ssh -o BatchMode=yes"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(node1), std::string::npos) << node1 << "\n" << result.out;
  EXPECT_NE(result.out.find(word("--max-restarts") + " " + word("1") + " " + word("--") + " " + word("run")),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("container passes it on by name (--env PRIMUS_JOB_TOKEN)"), std::string::npos) << result.out;

  ProcessResult own = RunPrimus({"ssh", "--hosts", "node[1-2]", "--dry-run", "--", "container", "--image", "local/x",
                                 "--", "direct", "--node-rank", "1", "--", "run", "true"});
  EXPECT_EQ(own.exit_code, 2) << own.all();
  EXPECT_NE(own.err.find("cannot be given under ssh"), std::string::npos) << own.err;
}

// Two hosts, each running its node agent inside a podman container (a
// private store; the hosts' logins get its CONTAINERS_STORAGE_CONF from
// sshd): both ranks run inside the image, form one job of world size 2 over
// the host network, and the token reaches them by name only.
TEST_F(SshLaunchTest, ContainerOnEveryHost) {
  if (std::string why = testing::PodmanStore::Unavailable(); !why.empty()) GTEST_SKIP() << "no podman: " << why;
  std::string error;
  // Podman first: it mounts the hugetlb hierarchy the hosts' mount namespaces must see.
  std::unique_ptr<testing::PodmanStore> store = testing::PodmanStore::Start(&error);
  ASSERT_TRUE(store) << error;
  ASSERT_EQ(store->ImportImage(testing::RootfsKind::kMini, "local/mini"), "");
  for (const auto& [name, value] : store->Environment()) {
    if (value) sshd_env_ += " " + name + "=" + *value;
  }
  MakeHosts(2);
  ProcessOptions options;
  options.env["PRIMUS_JOB_TOKEN"] = "5ec12e7700112233445566778899aabb";
  for (const auto& [name, value] : store->Environment()) options.env[name] = value;
  std::string script =
      "if [ -e /run/.containerenv ]; then where=inside; else where=outside; fi; "
      "if [ -n \"${PRIMUS_JOB_TOKEN+x}\" ]; then jt=set; else jt=unset; fi; "
      "echo \"$where rank=$RANK world=$WORLD_SIZE jt-$jt\"; "
      // Each worker stays until the test has looked at the containers (the
      // working directory is mounted), 60 s at most.
      "i=0; while [ ! -e looked ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done";
  HostProcess* launcher =
      Keep(Launch({"--hosts", "host[1-2]"},
                  {"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/sh", "-c", script},
                  options));
  ASSERT_TRUE(WaitFor([&] { return launcher->Out().find("inside rank=1") != std::string::npos &&
                                   launcher->Out().find("inside rank=0") != std::string::npos; },
                      60))
      << launcher->All();
  for (int host = 1; host <= 2; ++host) {
    for (pid_t pid : hosts_->ProcessesOn(host)) {
      EXPECT_EQ(CmdLine(pid).find("5ec12e77"), std::string::npos) << host << ": " << CmdLine(pid);
    }
  }
  // Each host's container holds the token in its environment (podman put it
  // there by name). Asked of podman on each host, in that host's namespaces,
  // not read from /proc/PID/environ: a container's process may not be
  // readable from outside where the tests run without CAP_SYS_PTRACE.
  ProcessOptions podman_options;
  podman_options.env = store->Environment();
  auto podman_on = [&](int host, std::vector<std::string> args) {
    args.insert(args.begin(), "podman");
    return hosts_->Run(host, args, podman_options);
  };
  std::set<std::string> containers;
  std::string answers;
  WaitFor([&] {
    containers.clear();
    answers.clear();
    for (int host = 1; host <= 2; ++host) {
      ProcessResult listed = podman_on(host, {"ps", "-a", "--format", "{{.Names}}"});
      answers += fmt::format("host{}: podman ps exit {}\n{}", host, listed.exit_code, listed.all());
      for (const std::string& line : primus::Split(listed.out, '\n')) {
        if (!line.empty()) containers.insert(line);
      }
    }
    return containers.size() >= 2;
  }, 30);
  EXPECT_EQ(containers.size(), 2u) << answers;
  for (const std::string& name : containers) {
    ProcessResult env = podman_on(1, {"inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", name});
    EXPECT_EQ(env.exit_code, 0) << env.all();
    EXPECT_NE(env.out.find("PRIMUS_JOB_TOKEN=5ec12e7700112233445566778899aabb\n"), std::string::npos)
        << name << ": the token did not reach the container";
  }
  ASSERT_TRUE(WriteFileAtomic(hosts_->dir() + "/looked", "").ok());
  ASSERT_EQ(launcher->Wait(120), 0) << launcher->All();
  std::string out = launcher->Out();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(out.find(fmt::format("[host{}:{}] inside rank={} world=2 jt-unset", rank + 1, rank, rank)),
              std::string::npos)
        << out << launcher->Err();
  }
  EXPECT_EQ(launcher->All().find("5ec12e77"), std::string::npos);
  EXPECT_TRUE(WaitFor([&] { return podman_on(1, {"ps", "-a", "--format", "{{.Names}}"}).out.empty(); }, 10))
      << "every host removed its container";
}

TEST_F(SshLaunchTest, HostChecksListEveryBrokenHostInOneError) {
  // host2 accepts no key, host3 runs no sshd, host4 is cut off.
  MakeHosts(4, {2}, {3});
  ASSERT_TRUE(hosts_->SetLink(4, false).ok());
  auto start = Clock::now();
  HostProcess* launcher = Keep(Launch({"--hosts", "host[1-4]", "--connect-timeout", "2"}, {"run", "sleep", "30"}));
  EXPECT_EQ(launcher->Wait(40), 4) << launcher->All();
  double seconds = SecondsSince(start);
  std::string err = launcher->Err();
  EXPECT_NE(err.find("3 of 4 hosts cannot run the job"), std::string::npos) << err;
  EXPECT_NE(err.find("host2: authentication failed"), std::string::npos) << err;
  EXPECT_NE(err.find("host3: unreachable"), std::string::npos) << err;
  EXPECT_NE(err.find("host4: unreachable"), std::string::npos) << err;
  EXPECT_EQ(err.find("host1:"), std::string::npos) << err;
  EXPECT_LT(seconds, 15) << "the hosts are checked in parallel (the cut-off host alone takes 2 s)";
  EXPECT_EQ(Workers("sleep"), 0u);
  fprintf(stderr, "host checks: %.2f s\n", seconds);
}

TEST_F(SshLaunchTest, CopiesTheBinaryOnceToAHostWithoutIt) {
  // The launcher's binary lives in bin/, which host2 sees empty.
  std::string bindir = "/tmp/primus-ssh-bin-" + std::to_string(::getpid());
  ASSERT_TRUE(MakeDirs(bindir).ok());
  ASSERT_EQ(RunProcess({"cp", PRIMUS_BINARY, bindir + "/primus-cli"}).exit_code, 0);
  MakeHosts(2, {}, {}, bindir, {2});
  std::string binary = bindir + "/primus-cli";
  for (int round = 0; round < 2; ++round) {
    HostProcess* launcher = Keep(Launch({"--hosts", "host[1-2]"}, {"run", "/bin/sh", "-c", "echo ran from $0"}, {}, binary));
    ASSERT_EQ(launcher->Wait(60), 0) << launcher->All();
    bool copied = launcher->Err().find("[host2] copying primus-cli") != std::string::npos;
    EXPECT_EQ(copied, round == 0) << launcher->Err();
    EXPECT_EQ(launcher->Err().find("[host1] copying"), std::string::npos);
  }
  std::filesystem::remove_all(bindir);
  auto listing = RunProcess({"sh", "-c", "ls " + hosts_->dir() + "/cache-host2/primus-cli/*/primus-cli"});
  EXPECT_EQ(listing.exit_code, 0) << listing.all();
}

// A jump host: host3's sshd listens only on a link between host2 and host3,
// which host1 (the launcher) has no route to; the user's ssh configuration
// says `ProxyJump host2` for host3. The host check and the launch reach host3
// through host2, and the job runs on all three hosts (host3's agent reaches
// node 0 over the cluster network, eth0, as on a cluster with a bastion).
TEST_F(SshLaunchTest, ReachesAHostOnlyThroughAJumpHost) {
  private_links_ = {{2, 3}};
  listen_[3] = PrivateAddress(3);
  MakeHosts(3);
  std::string config = testing::Slurp(hosts_->dir() + "/ssh_config");
  Write("ssh_config", fmt::format("Host host3\n  HostName {}\n  ProxyJump host2\n", PrivateAddress(3)) + config);
  // Without the jump host, host3 cannot be reached from host1.
  ProcessOptions bounded;
  bounded.timeout_s = 15;
  ProcessResult direct = hosts_->Run(1, {"ssh", "-F", hosts_->dir() + "/ssh_config", "-o", "BatchMode=yes", "-o",
                                        "ProxyJump=none", "-o", "ConnectTimeout=3", "host3", "true"},
                                     bounded);
  ASSERT_EQ(direct.exit_code, 255) << direct.all();
  auto start = Clock::now();
  HostProcess* launcher =
      Keep(Launch({"--hosts", "host[1-3]"}, {"run", "/bin/sh", "-c", "echo ran on $(hostname) as rank $RANK of $WORLD_SIZE"}));
  ASSERT_EQ(launcher->Wait(60), 0) << launcher->All();
  double seconds = SecondsSince(start);
  std::string out = launcher->Out();
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(out.find(fmt::format("[host{0}:{1}] ran on host{0} as rank {1} of 3", rank + 1, rank)), std::string::npos)
        << out;
  }
  // host3's sshd saw the connection come from host2's end of the private link.
  EXPECT_TRUE(WaitFor([&] { return sshd_[2].Err().find("from " + PrivateAddress(2)) != std::string::npos; }, 5))
      << sshd_[2].All();
  fprintf(stderr, "3 hosts, host3 through host2: %.2f s\n", seconds);
}

// A host whose glibc is older than the binary needs is refused by the host
// check, with the versions, before anything starts. host2 reports glibc 2.17
// (CentOS 7's): its getconf is replaced, in host2's own mount namespace, by
// one that says so. A real old libc cannot be put under that host's sshd
// (sshd, the shell and getconf would need it too); what the check reads is
// getconf's answer, and the loader's refusal itself is tested with
// tests/support/fake_old_libc in the container runtime's tests.
TEST_F(SshLaunchTest, AHostWithTooOldAGlibcIsRefusedClearly) {
  MakeHostsWithOldGlibcOn(2);
  HostProcess* launcher = Keep(Launch({"--hosts", "host[1-2]"}, {"run", "sleep", "30"}));
  EXPECT_EQ(launcher->Wait(40), 4) << launcher->All();
  std::string err = launcher->Err();
  EXPECT_NE(err.find("1 of 2 hosts cannot run the job"), std::string::npos) << err;
  std::smatch match;
  EXPECT_TRUE(std::regex_search(err, match, std::regex(R"(host2: glibc 2\.17 is too old: primus-cli needs glibc 2\.\d+ or newer)")))
      << err;
  EXPECT_EQ(err.find("host1:"), std::string::npos) << err;
  EXPECT_EQ(Workers("sleep"), 0u);
}

// Ctrl-C at the launching terminal: every host's workers stop, exit 130.
TEST_F(SshLaunchTest, InterruptStopsEveryHost) {
  MakeHosts(3);
  HostProcess* launcher = Keep(Launch({"--hosts", "host[1-3]"}, {"run", "sleep", "300"}));
  ASSERT_TRUE(WaitFor([&] { return Workers("sleep") >= 3; }, 30))
      << launcher->All();
  auto start = Clock::now();
  launcher->Kill(SIGINT);
  EXPECT_EQ(launcher->Wait(30), 130) << launcher->All();
  double seconds = SecondsSince(start);
  EXPECT_EQ(Workers("sleep"), 0u);
  EXPECT_EQ(MatchingAnywhere(std::string("\0direct\0", 8)), 0u);
  EXPECT_LT(seconds, 10);
  fprintf(stderr, "Ctrl-C to every host's workers gone: %.2f s\n", seconds);
}

// Ctrl-C while the host checks wait on a login that does not finish (host2's
// ~/.bashrc sleeps, as one waiting on a lock does): the launcher ends its
// ssh clients at once, starts nothing, and exits 130.
TEST_F(SshLaunchTest, InterruptDuringTheHostChecksLeavesNoSshClientBehind) {
  login_rc_[2] = "sleep 120\n";
  MakeHosts(2);
  HostProcess* launcher = Keep(Launch({"--hosts", "host[1-2]"}, {"run", "sleep", "300"}));
  ASSERT_TRUE(WaitFor([&] { return !Matching(2, std::string("sleep\0" "120", 9)).empty(); }, 30)) << launcher->All();
  auto start = Clock::now();
  launcher->Kill(SIGINT);
  EXPECT_EQ(launcher->Wait(30), 130) << launcher->All();
  double seconds = SecondsSince(start);
  EXPECT_LT(seconds, 10);
  EXPECT_NE(launcher->Err().find("SIGINT: stopped during the host checks and copies; nothing was started on any host"),
            std::string::npos)
      << launcher->All();
  EXPECT_EQ(MatchingAnywhere("BatchMode=yes"), 0u) << "an ssh client of the host checks outlived the launcher";
  EXPECT_EQ(MatchingAnywhere(std::string("sleep\0" "300", 9)), 0u) << "a worker started";
  fprintf(stderr, "Ctrl-C during the host checks to the launcher's exit: %.2f s\n", seconds);
}

// host3's ssh connection drops (its sshd session process dies): host3's
// workers stop, and so does the job on the other hosts.
TEST_F(SshLaunchTest, ADroppedConnectionStopsTheJob) {
  MakeHosts(3);
  HostProcess* launcher = Keep(Launch({"--hosts", "host[1-3]"}, {"run", "sleep", "300"}));
  // Past the host checks (their ssh sessions are not the job's) and running everywhere.
  ASSERT_TRUE(WaitFor([&] { return launcher->Err().find("starting 3 node agents") != std::string::npos; }, 30))
      << launcher->All();
  ASSERT_TRUE(WaitFor([&] { return Workers("sleep") >= 3; }, 30)) << launcher->All();
  auto start = Clock::now();
  pid_t listener = sshd_[2].pid();
  int killed = 0;
  for (pid_t pid : hosts_->ProcessesOn(3)) {
    if (pid != listener && Comm(pid) == "sshd") killed += ::kill(pid, SIGKILL) == 0;
  }
  ASSERT_GT(killed, 0);
  int code = launcher->Wait(40);
  double seconds = SecondsSince(start);
  EXPECT_EQ(code, 129) << launcher->All();  // the hangup of host3's agent, everywhere
  EXPECT_NE(launcher->Err().find("[host3] the ssh session ended"), std::string::npos) << launcher->All();
  // host3's agent had its hangup when the session dropped, not when we ended.
  EXPECT_TRUE(WaitFor([&] { return Workers("sleep") == 0; }, 5)) << Workers("sleep");
  EXPECT_TRUE(WaitFor([&] { return MatchingAnywhere(std::string("\0direct\0", 8)) == 0; }, 5));
  EXPECT_LT(seconds, 20);
  fprintf(stderr, "dropped connection to every host's workers gone: %.2f s (exit %d)\n", seconds, code);
}

// The example trainer across 3 hosts: gloo DDP, one worker per host (the
// hostfile's slots), 20 steps instead of 200.
using SshTrainTest = SshLaunchTest;

TEST_F(SshTrainTest, GptPretrainAcrossThreeHosts) {
  MakeHosts(3);
  ProcessOptions options;
  options.cwd = kSource;  // the experiment names its script relative to the repository
  options.timeout_s = 300;
  auto start = Clock::now();
  HostProcess* launcher = Keep(Launch({"--hostfile", Hostfile("host1 slots=1\nhost2 slots=1\nhost3 slots=1\n")},
                                      {"train", "pretrain", "--config", kSource + "/examples/gpt/configs/tiny-cpu.yaml",
                                       "workspace=" + hosts_->dir() + "/output", "training.steps=20",
                                       "checkpoint.interval=10", "parallelism.global_batch=12"},
                                      options));
  ASSERT_EQ(launcher->Wait(280), 0) << launcher->All();
  double seconds = SecondsSince(start);
  // Rank 0 prints the steps; every host's agent reports its end.
  std::string out = launcher->Out();
  EXPECT_NE(out.find("[host1:0] step 20/20 "), std::string::npos) << out;
  EXPECT_NE(out.find(" world 3"), std::string::npos) << out;
  std::string err = launcher->Err();
  for (int host = 1; host <= 3; ++host) {
    std::regex succeeded(fmt::format(R"(\[host{0}\] .*\[host{0}\] \[INFO\] experiment .*: succeeded \(exit 0\))", host));
    EXPECT_TRUE(std::regex_search(err, succeeded)) << err;
  }
  fprintf(stderr, "3-host train pretrain through ssh: %.1f s\n", seconds);
}

// train --preflight full as a gate, under direct.exclude_bad_nodes: host2's
// logins set a socket interface it lacks, so its network check FAILs; host2
// leaves the job (exit 5) before any worker starts, and the job starts again
// on host1 and the spare host3, where it trains.
TEST_F(SshTrainTest, PreflightFullKeepsAFailingHostOutAndTheSpareTakesItsPlace) {
  login_rc_[2] = "export GLOO_SOCKET_IFNAME=ib9\n";
  MakeHosts(3);
  ProcessOptions options;
  options.cwd = kSource;  // the experiment names its script relative to the repository
  options.env["HOME"] = hosts_->dir();
  options.env["NO_COLOR"] = "1";
  std::vector<std::string> argv = {
      PRIMUS_BINARY, "--set", "direct.exclude_bad_nodes=true", "--set", "direct.max_restarts=1", "ssh", "-F",
      hosts_->dir() + "/ssh_config", "--hostfile", Hostfile("host1 slots=1\nhost2 slots=1\nhost3 slots=1\n"), "-N",
      "2", "--", "train", "pretrain", "--config", kSource + "/examples/gpt/configs/tiny-cpu.yaml",
      "workspace=" + hosts_->dir() + "/output", "training.steps=4", "checkpoint.interval=10",
      "parallelism.global_batch=8", "--preflight", "full"};
  HostProcess* launcher = Keep(hosts_->Start(1, argv, options));
  ASSERT_EQ(launcher->Wait(280), 0) << launcher->All();
  std::string out = launcher->Out(), err = launcher->Err();
  EXPECT_NE(err.find("preflight full: this node FAILs; it leaves the job"), std::string::npos) << err;
  EXPECT_NE(err.find("host2 left the job as a bad node; starting it again without host2"), std::string::npos) << err;
  EXPECT_NE(out.find("[host1:0] step 4/4 "), std::string::npos) << out;
  EXPECT_NE(out.find(" world 2"), std::string::npos) << out;
  EXPECT_EQ(out.find("[host2:"), std::string::npos) << "no worker ever started on host2:\n" << out;

  // Without the policy the gate refuses the launch on every node (exit 4), naming the host.
  std::vector<std::string> strict(argv.begin() + 5, argv.end());
  strict.insert(strict.begin(), PRIMUS_BINARY);
  HostProcess* refused = Keep(hosts_->Start(1, strict, options));
  EXPECT_EQ(refused->Wait(120), 4) << refused->All();
  EXPECT_NE(refused->Err().find("preflight full: a node of the job FAILs (host2)"), std::string::npos) << refused->Err();
  EXPECT_EQ(refused->Out().find(" step 1/4 "), std::string::npos) << "no worker started";
}

// direct.exclude_bad_nodes: -N 2 of a 3-host hostfile, the rank on host2
// stalls outside the all_reduce; node 0 names host2, its agent leaves the
// job (exit 5), and the launcher starts the job again on host1 and the spare
// host3, where it finishes.
TEST_F(SshTrainTest, ABadHostIsReplacedByTheSpare) {
  MakeHosts(3);
  ProcessOptions options;
  options.cwd = hosts_->dir();
  options.env["HOME"] = hosts_->dir();
  options.env["NO_COLOR"] = "1";
  std::vector<std::string> argv = {PRIMUS_BINARY, "--set", "direct.exclude_bad_nodes=true", "--set",
                                   "direct.max_restarts=1", "ssh", "-F", hosts_->dir() + "/ssh_config",
                                   "--hostfile", Hostfile("host1 slots=1\nhost2 slots=1\nhost3 slots=1\n"), "-N", "2",
                                   "--", "direct", "--hang-timeout", "15", "--term-timeout", "2", "--", "run",
                                   "/usr/bin/python3", kSource + "/tests/workers/hang_on_host.py", "host2"};
  auto start = Clock::now();
  HostProcess* launcher = Keep(hosts_->Start(1, argv, options));
  ASSERT_EQ(launcher->Wait(240), 0) << launcher->All();
  std::string out = launcher->Out(), err = launcher->Err();
  EXPECT_NE(out.find("on host2: stalling at step 2"), std::string::npos) << out;
  EXPECT_NE(err.find("excluding node 1 (host2) from the job (the hang's culprit"), std::string::npos) << err;
  EXPECT_NE(err.find("host2 left the job as a bad node; starting it again without host2"), std::string::npos) << err;
  EXPECT_NE(out.find("on host3: done, world 2"), std::string::npos) << out;
  EXPECT_NE(out.find("on host1: done, world 2"), std::string::npos) << out;
  fprintf(stderr, "bad host replaced by the spare through ssh: %.1f s\n", SecondsSince(start));
}

}  // namespace
}  // namespace primus
