// primus-cli on a node many people share (issue 27): each way another user or
// a careless neighbour could make the launcher write where they want, read
// its secrets, run their code, take its job, or end it, tried for real
// against the built binary.
//   - Files: a runs directory, job directory or planted link of another user
//     (a real unprivileged process races the run directory); the modes of
//     everything written; secrets people name their own way; a reused log
//     directory.
//   - Replay of an edited snapshot, and of one another user owns.
//   - The control channel: a program squatting the control port; a peer
//     whose host name would forge a log line; preflight's exchange with a
//     stranger and a node without the token.
//   - Untrusted JSON from workers and files: metrics lines, metadata.json.
//   - A paused console beside a short heartbeat timeout; a SIGINT at every
//     phase of a launch; a full disk; slow clients on the metrics port.
// Tests that need another user (chown to nobody, setuid) skip without root.
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "free_port.h"
#include "io/message_socket.h"
#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

bool IsRoot() { return ::geteuid() == 0; }

std::string ShortHost() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return Split(host, '.')[0];
}

mode_t ModeOf(const fs::path& path) {
  struct stat info {};
  ::lstat(path.c_str(), &info);
  return info.st_mode & 07777;
}

void ChownTree(const fs::path& root, uid_t uid) {
  ASSERT_EQ(::lchown(root.c_str(), uid, uid), 0) << root;
  if (!fs::is_directory(fs::symlink_status(root))) return;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    ASSERT_EQ(::lchown(entry.path().c_str(), uid, uid), 0) << entry.path();
  }
}

class SharedNodeTest : public ::testing::Test {
 protected:
  ProcessOptions Options(double timeout_s = 60) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.env["NO_COLOR"] = "1";
    options.env["TMPDIR"] = dir_.path() + "/tmp";
    options.timeout_s = timeout_s;
    return options;
  }
  void SetUp() override {
    // A shared temporary directory, as /tmp is: everyone may write, the sticky bit on.
    fs::create_directories(dir_.path() + "/tmp");
    ::chmod((dir_.path() + "/tmp").c_str(), 01777);
    ::chmod(dir_.path().c_str(), 0755);
  }
  // A small `train` experiment with the command backend.
  void WriteExperiment(const std::string& name, const std::string& command, const std::string& extra = "") const {
    dir_.Write(name, "exp_name: shared\n"
                     "workspace: " + dir_.path() + "/ws\n"
                     "backend: command\n"
                     "distributed: {nproc_per_node: 1}\n"
                     "command: {argv: [/bin/sh, -c, '" + command + "']}\n" + extra);
  }
  ProcessResult Train(const std::vector<std::string>& before_task, const std::vector<std::string>& after,
                      ProcessOptions options) const {
    std::vector<std::string> args = before_task;
    for (const char* word : {"--", "train", "pretrain", "--no-preflight"}) args.push_back(word);
    args.insert(args.end(), after.begin(), after.end());
    return RunPrimus(args, options);
  }
  std::vector<fs::path> Experiments() const {
    std::vector<fs::path> found;
    if (!fs::exists(dir_.path() + "/ws")) return found;
    for (const auto& entry : fs::directory_iterator(dir_.path() + "/ws")) found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    return found;
  }
  static nlohmann::json Json(const fs::path& path) { return nlohmann::json::parse(Slurp(path), nullptr, false); }

  TempDir dir_;
};

// ---- Files ----------------------------------------------------------------

TEST_F(SharedNodeTest, ARunsDirectoryAnotherUserMadeIsRefusedAndNothingIsWrittenThroughIt) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to act as another user (nobody)";
  std::string victim = dir_.Write("victim", "precious\n");
  // nobody made ${TMPDIR}/primus-0 first, open to all, with a link where the run's logs would go.
  fs::path runs = dir_.path() + "/tmp/primus-" + std::to_string(::getuid());
  fs::create_directories(runs / "job-1" / "attempt_0");
  fs::create_symlink(victim, runs / "job-1" / "attempt_0" / (ShortHost() + ".rank0.log"));
  ::chmod(runs.c_str(), 0777);
  ChownTree(runs, kNobody);
  ProcessOptions options = Options();
  options.env["PRIMUS_DIRECT_RUN_ID"] = "job-1";
  ProcessResult result = RunPrimus({"direct", "--", "run", "/bin/echo", "overwritten"}, options);
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_TRUE(Contains(result.err, "refusing " + runs.string() + ": it is owned by nobody (uid 65534)")) << result.err;
  EXPECT_EQ(Slurp(victim), "precious\n");
}

TEST_F(SharedNodeTest, AJobDirectoryAnotherUserPlantedIsRefusedNamingItsOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to act as another user (nobody)";
  std::string victim = dir_.Write("victim", "precious\n");
  WriteExperiment("exp.yaml", "echo overwritten");
  // A shared workspace (sticky, open to all) where nobody made the job's directory with a link in it.
  fs::path ws = dir_.path() + "/ws";
  fs::path attempt = ws / "shared_job-77" / "logs" / "attempt_0";
  fs::create_directories(attempt);
  fs::create_symlink(victim, attempt / (ShortHost() + ".rank0.log"));
  ChownTree(ws / "shared_job-77", kNobody);
  ::chmod(ws.c_str(), 01777);
  ProcessOptions options = Options();
  options.env["PRIMUS_JOB_ID"] = "job-77";
  ProcessResult result = Train({"direct"}, {"--config", "exp.yaml"}, options);
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_TRUE(Contains(result.err, (ws / "shared_job-77").string() + ": it is owned by nobody (uid 65534)"))
      << result.err;
  EXPECT_EQ(Slurp(victim), "precious\n");
}

// A real unprivileged process races the launcher for ${TMPDIR}/primus-<uid>:
// it creates it, plants links and swaps directories in it as fast as it can.
// Whoever wins, the launcher never writes where the attacker points.
TEST_F(SharedNodeTest, ARealUserRacingTheRunsDirectoryNeverRedirectsAWrite) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to start a process as another user (nobody)";
  fs::path victims = dir_.path() + "/victims";
  fs::create_directories(victims);
  std::string runs = dir_.path() + "/tmp/primus-" + std::to_string(::getuid());
  pid_t racer = ::fork();
  if (racer == 0) {
    ::setgroups(0, nullptr);
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
      ::mkdir(runs.c_str(), 0777);
      ::chmod(runs.c_str(), 0777);
      std::string link = runs + "/job-" + std::to_string(i % 8);
      ::symlink(victims.c_str(), link.c_str());
      ::rename(link.c_str(), (link + ".x").c_str());
      ::symlink(victims.c_str(), link.c_str());
    }
    ::_exit(0);
  }
  ASSERT_GT(racer, 0);
  int ran = 0, refused = 0;
  for (int i = 0; i < 8; ++i) {
    ProcessOptions options = Options();
    options.env["PRIMUS_DIRECT_RUN_ID"] = "job-" + std::to_string(i);
    ProcessResult result = RunPrimus({"direct", "--", "run", "/bin/echo", "launch " + std::to_string(i)}, options);
    if (result.exit_code == 0) ++ran;
    else if (result.exit_code == 4 && Contains(result.err, "refusing " + runs)) ++refused;
    else ADD_FAILURE() << "launch " << i << ": " << result.all();
  }
  ::kill(racer, SIGKILL);
  ::waitpid(racer, nullptr, 0);
  EXPECT_EQ(ran + refused, 8);
  EXPECT_TRUE(fs::is_empty(victims)) << "a write went where the attacker pointed";
  // The runs directory, whoever made it, was never both ours and open to others.
  struct stat info {};
  if (::lstat(runs.c_str(), &info) == 0 && info.st_uid == ::getuid()) {
    EXPECT_EQ(info.st_mode & 0077, 0u);
  }
}

TEST_F(SharedNodeTest, SnapshotsAndLogsAreTheUsersAloneOrTheGroupsWhenAsked) {
  WriteExperiment("exp.yaml", "echo done");
  ProcessOptions options = Options();
  ::umask(022);  // the usual umask, under which everything was world-readable before
  ProcessResult result = Train({"direct"}, {"--config", "exp.yaml"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  // And a run of the node agent alone, in the default log root.
  ProcessResult run = RunPrimus({"direct", "--", "run", "/bin/echo", "hi"}, options);
  ASSERT_EQ(run.exit_code, 0) << run.all();
  std::vector<std::string> open;
  for (const fs::path& root : {fs::path(dir_.path() + "/ws"),
                               fs::path(dir_.path() + "/tmp/primus-" + std::to_string(::getuid()))}) {
    ASSERT_TRUE(fs::exists(root)) << root;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if ((ModeOf(entry.path()) & 0077) != 0) open.push_back(entry.path().string() + fmt::format(" {:o}", ModeOf(entry.path())));
    }
  }
  EXPECT_TRUE(open.empty()) << "readable by others:\n" << Join(open, "\n");
  fs::path experiment = Experiments().at(0);
  EXPECT_EQ(ModeOf(experiment), 0700u);
  EXPECT_EQ(ModeOf(experiment / "env/primus_env_dump.txt"), 0600u);

  // A team shares with its group: readable by the group, never by everyone.
  options.env["PRIMUS_MAIN_GROUP_READABLE"] = "true";
  result = Train({"direct"}, {"--config", "exp.yaml"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  fs::path shared = Experiments().back();
  EXPECT_EQ(ModeOf(shared), 0750u);
  EXPECT_EQ(ModeOf(shared / "metadata.json"), 0640u);
  for (const auto& entry : fs::recursive_directory_iterator(shared)) {
    EXPECT_EQ(ModeOf(entry.path()) & 0007, 0u) << entry.path();
  }
}

TEST_F(SharedNodeTest, SecretsNamedThePeoplesWayAreInNoFileAndNoOutput) {
  WriteExperiment("exp.yaml", "echo done");
  const std::map<std::string, std::string> secrets = {
      {"MY_PASS", "pass-value-27a"},
      {"DB_PWD", "pwd-value-27b"},
      {"GH_PAT", "pat-value-27c"},
      {"OPENAI_KEY", "openai-value-27d"},
      {"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/webhook27e"},
      {"AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=azure27f=="},
      {"SOME_SETTING", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
      {"SORT_KEY", "by-length"},  // a setting that only looks like a secret
  };
  ProcessOptions options = Options();
  for (const auto& [name, value] : secrets) options.env[name] = value;
  ProcessResult result = Train({"--debug", "direct"}, {"--config", "exp.yaml"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  for (const char* needle : {"pass-value-27a", "pwd-value-27b", "pat-value-27c", "openai-value-27d", "webhook27e",
                             "azure27f", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}) {
    EXPECT_FALSE(Contains(result.all(), needle)) << needle << " printed";
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path() + "/ws")) {
      if (entry.is_regular_file()) {
        EXPECT_FALSE(Contains(Slurp(entry.path()), needle)) << needle << " in " << entry.path();
      }
    }
  }
  // Settings that only look alike stay readable, or a replay would break.
  std::string dump = Slurp(Experiments().at(0) / "env/primus_env_dump.txt");
  EXPECT_TRUE(Contains(dump, "by-length")) << dump;
}

TEST_F(SharedNodeTest, AReusedLogDirectoryKeepsTheEarlierRunsLogs) {
  std::string logs = dir_.path() + "/logs";
  ProcessResult first = RunPrimus({"direct", "--log-dir", logs, "--", "run", "/bin/echo", "first run"}, Options());
  ASSERT_EQ(first.exit_code, 0) << first.all();
  ProcessResult second = RunPrimus({"direct", "--log-dir", logs, "--", "run", "/bin/echo", "second run"}, Options());
  ASSERT_EQ(second.exit_code, 0) << second.all();
  std::string rank0 = "attempt_0/" + ShortHost() + ".rank0.log";
  EXPECT_TRUE(Contains(Slurp(logs + "/" + rank0), "first run")) << "the first run's log was overwritten";
  std::vector<fs::path> fresh;
  for (const auto& entry : fs::directory_iterator(logs)) {
    std::string name = entry.path().filename();
    if (entry.is_directory() && name != "attempt_0" && name != "telemetry" && name != "tensorboard") {
      fresh.push_back(entry.path());
    }
  }
  ASSERT_EQ(fresh.size(), 1u) << second.all();
  EXPECT_TRUE(Contains(Slurp(fresh[0] / rank0), "second run"));
  EXPECT_TRUE(Contains(second.err, "holds the logs of an earlier run on this host")) << second.err;
}

// ---- Replay ---------------------------------------------------------------

class SharedNodeReplayTest : public SharedNodeTest {
 protected:
  void SetUp() override {
    SharedNodeTest::SetUp();
    WriteExperiment("exp.yaml", "echo worker ran");
    ProcessResult first = Train({"direct"}, {"--config", "exp.yaml"}, Options());
    ASSERT_EQ(first.exit_code, 0) << first.all();
    recorded_ = Experiments().at(0);
  }
  ProcessResult Replay(const std::vector<std::string>& extra, bool dry_run = false) const {
    std::vector<std::string> before = dry_run ? std::vector<std::string>{"--dry-run", "direct"} : std::vector<std::string>{"direct"};
    std::vector<std::string> after = {"--replay", recorded_.string()};
    after.insert(after.end(), extra.begin(), extra.end());
    return Train(before, after, Options());
  }
  fs::path recorded_;
};

TEST_F(SharedNodeReplayTest, AnEditedSnapshotShowsWhatChangesTheCodeAndRunsOnlyWithForce) {
  // Edited: a preloaded library and a Python path in env/, a hook directory in config/.
  nlohmann::json env = Json(recorded_ / "env/env.json");
  env["LD_PRELOAD"] = {{"value", "/nonexistent/evil.so"}, {"origin", "user environment"}};
  env["PYTHONPATH"] = {{"value", "/tmp/evil"}, {"origin", "user environment"}};
  std::ofstream(recorded_ / "env/env.json") << env.dump(2);
  std::string resolved = Slurp(recorded_ / "config/resolved.yaml");
  size_t hooks = resolved.find("\nhooks:\n");
  ASSERT_NE(hooks, std::string::npos) << resolved;
  size_t next = resolved.find("\n", resolved.find("dirs:", hooks));
  resolved.replace(hooks, next - hooks, "\nhooks:\n  dirs: [evil-hooks]");
  std::ofstream(recorded_ / "config/resolved.yaml") << resolved;
  fs::path marker = dir_.path() + "/hook-ran";
  fs::create_directories(recorded_ / "config/evil-hooks/train/pretrain");
  std::ofstream(recorded_ / "config/evil-hooks/train/pretrain/01_evil.sh") << "#!/bin/sh\ntouch " << marker.string() << "\n";
  fs::permissions(recorded_ / "config/evil-hooks/train/pretrain/01_evil.sh", fs::perms::owner_all);

  ProcessResult plan = Replay({}, /*dry_run=*/true);
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  for (const char* shown : {"LD_PRELOAD=/nonexistent/evil.so (now unset)", "PYTHONPATH=/tmp/evil",
                            "hooks.dirs: evil-hooks"}) {
    EXPECT_TRUE(Contains(plan.out, shown)) << shown << "\n" << plan.out;
  }
  EXPECT_TRUE(Contains(plan.out, "(needs --force)")) << plan.out;

  size_t before = Experiments().size();
  ProcessResult refused = Replay({});
  EXPECT_EQ(refused.exit_code, 3) << refused.all();
  EXPECT_TRUE(Contains(refused.err, "LD_PRELOAD=/nonexistent/evil.so")) << refused.err;
  EXPECT_TRUE(Contains(refused.err, "add --force")) << refused.err;
  EXPECT_FALSE(fs::exists(marker)) << "the hook ran without --force";
  EXPECT_EQ(Experiments().size(), before) << "nothing was created";

  ProcessResult forced = Replay({"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.all();
  EXPECT_TRUE(Contains(forced.err, "LD_PRELOAD=/nonexistent/evil.so")) << "the header says what it runs:\n" << forced.err;
  // A replay runs the hooks the recorded run ran (their copies, metadata.json's
  // launch.scripts), not what an edited hooks.dirs finds now.
  EXPECT_FALSE(fs::exists(marker)) << "a hook the recorded run did not run ran";
  EXPECT_TRUE(Contains(forced.err, "01_evil.sh did not run in the recorded run and does not run now")) << forced.err;
}

TEST_F(SharedNodeReplayTest, AnUneditedSnapshotReplaysWithoutForce) {
  ProcessResult replayed = Replay({});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.all();
  EXPECT_TRUE(Contains(replayed.err, "the recorded run changes no library, interpreter or hook here")) << replayed.err;
}

TEST_F(SharedNodeReplayTest, ASnapshotAnotherUserOwnsNeedsForce) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to give the snapshot to another user";
  ASSERT_EQ(::chown((recorded_ / "config/resolved.yaml").c_str(), kNobody, kNobody), 0);
  ProcessResult refused = Replay({});
  EXPECT_EQ(refused.exit_code, 3) << refused.all();
  EXPECT_TRUE(Contains(refused.err, "resolved.yaml is owned by nobody (uid 65534)")) << refused.err;
  EXPECT_EQ(Replay({"--force"}).exit_code, 0);
}

// ---- The control channel and preflight's exchange ---------------------------

// What a program listening on a port received, and what it sent back.
class FakeListener {
 public:
  using Script = std::function<void(int fd, std::string* received)>;
  FakeListener(int port, Script script) {
    auto listener = io::ListenForNodes(port);
    EXPECT_TRUE(listener.ok()) << listener.error().message;
    if (!listener.ok()) return;
    listener_ = std::move(*listener);
    thread_ = std::thread([this, script] {
      pollfd waiter{listener_.get(), POLLIN, 0};
      if (::poll(&waiter, 1, 20000) != 1) return;
      std::string peer;
      io::UniqueFd fd = io::AcceptNode(listener_.get(), &peer);
      int flags = ::fcntl(fd.get(), F_GETFL);
      ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      script(fd.get(), &received_);
    });
  }
  ~FakeListener() {
    if (thread_.joinable()) thread_.join();
  }
  const std::string& received() {
    if (thread_.joinable()) thread_.join();
    return received_;
  }
  // Reads what arrives within `seconds` into `received`.
  static void ReadFor(int fd, std::string* received, double seconds) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    char buffer[4096];
    while (std::chrono::steady_clock::now() < until) {
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, 50) != 1) continue;
      ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      received->append(buffer, static_cast<size_t>(n));
    }
  }
  static void Send(int fd, const std::string& text) { (void)!::send(fd, text.data(), text.size(), MSG_NOSIGNAL); }

 private:
  io::UniqueFd listener_;
  std::string received_;
  std::thread thread_;
};

TEST_F(SharedNodeTest, AProgramSquattingTheControlPortLearnsNoTokenAndStartsNoWorker) {
  int port = FreePortPair();
  ASSERT_GT(port, 0);
  FakeListener squatter(port + 1, [](int fd, std::string* received) {
    FakeListener::ReadFor(fd, received, 1.0);  // the hello
    // Orders of every kind, then a challenge it cannot prove.
    FakeListener::Send(fd, R"({"type":"welcome"})" "\n"
                           R"({"type":"start","generation":0,"node_rank":1,"nnodes":2,"master_addr":"127.0.0.1",)"
                           R"("master_port":1,"run_id":"../../../tmp/primus-forged"})" "\n"
                           R"({"type":"decision","generation":0,"restart":false,"exit_code":0})" "\n"
                           R"({"type":"challenge","nonce":"0123456789abcdef0123456789abcdef","proof":"00"})" "\n");
    FakeListener::ReadFor(fd, received, 3.0);
  });
  ProcessOptions options = Options();
  options.env["PRIMUS_JOB_TOKEN"] = "job-token-secret-27";
  auto begin = std::chrono::steady_clock::now();
  ProcessResult member = RunPrimus({"direct", "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
                                    "--master-port", std::to_string(port), "--join-timeout", "20", "--", "run",
                                    "/bin/sh", "-c", "touch " + dir_.path() + "/worker-started"},
                                   options);
  EXPECT_EQ(member.exit_code, 4) << member.all();
  EXPECT_LT(SecondsSince(begin), 15) << "refused at the challenge, not at the join timeout";
  EXPECT_TRUE(Contains(member.err, "is not this job's node 0")) << member.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/worker-started")) << "a worker started on a squatter's word";
  EXPECT_FALSE(fs::exists("/tmp/primus-forged"));
  const std::string& received = squatter.received();
  EXPECT_TRUE(Contains(received, "\"hello\"")) << received;
  EXPECT_FALSE(Contains(received, "job-token-secret-27")) << "the token crossed the wire:\n" << received;
}

TEST_F(SharedNodeTest, APeerWhoseHostNameHoldsANewlineCannotForgeALogLine) {
  int port = FreePortPair();
  ASSERT_GT(port, 0);
  std::string base = dir_.path() + "/node0";
  ProcessOptions options = Options();
  options.env["PRIMUS_JOB_TOKEN"] = "job-token-secret-27";
  pid_t node0 = StartProcess({PRIMUS_BINARY, "direct", "--nnodes", "2", "--node-rank", "0", "--master-addr",
                              "127.0.0.1", "--master-port", std::to_string(port), "--join-timeout", "3", "--", "run",
                              "/bin/true"},
                             base + ".out", base + ".err", options);
  ASSERT_GT(node0, 0);
  std::optional<io::UniqueFd> fd;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto connected = io::ConnectToNode("127.0.0.1", port + 1, 1);
        if (connected) fd = std::move(*connected);
        return connected.ok();
      },
      10));
  // With the token too, as an agent of an older version would send it.
  std::string hello = R"({"type":"hello","token":"job-token-secret-27","nonce":"0123456789abcdef0123456789abcdef",)"
                      R"("node_rank":1,"nnodes":2,)"
                      R"("nproc_per_node":1,"version":"x","host":"evil\n[2026-01-01 00:00:00.000] [forged] [INFO] )"
                      R"(all 2 nodes joined"})" "\n";
  (void)!::send(fd->get(), hello.data(), hello.size(), MSG_NOSIGNAL);
  EXPECT_EQ(WaitForExit(node0, 30), 4);
  std::string log = Slurp(base + ".err");
  for (const std::string& line : Split(log, '\n')) {
    EXPECT_FALSE(line.starts_with("[2026-01-01")) << "a peer forged a log line:\n" << log;
  }
}

TEST_F(SharedNodeTest, PreflightsExchangeRefusesAStrangerAndANodeWithoutTheTokenAndNeverEndsNode0) {
  int port = FreePort();
  ASSERT_GT(port, 0);
  auto preflight = [&](int rank, const std::string& token, const std::string& name) {
    ProcessOptions options = Options(60);
    options.env["PRIMUS_JOB_TOKEN"] = token;
    std::string base = dir_.path() + "/" + name;
    return StartProcess({PRIMUS_BINARY, "direct", "--nnodes", "2", "--node-rank", std::to_string(rank),
                         "--master-addr", "127.0.0.1", "--master-port", std::to_string(port), "--", "preflight",
                         "--host", "--report", dir_.path() + "/report", "--timeout", "25"},
                        base + ".out", base + ".err", options);
  };
  pid_t node0 = preflight(0, "job-token-27", "node0");
  // A stranger: connects and sends a report with a string node rank and garbage.
  std::optional<io::UniqueFd> fd;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto connected = io::ConnectToNode("127.0.0.1", port, 1);
        if (connected) fd = std::move(*connected);
        return connected.ok();
      },
      15));
  std::string junk = "auth zz zz\n{\"node_rank\": \"1\", \"results\": [null]}\n" + std::string(1 << 16, '[') + "\n";
  (void)!::send(fd->get(), junk.data(), junk.size(), MSG_NOSIGNAL);
  fd.reset();
  // A node with another token is refused; the real one gets in.
  pid_t wrong = preflight(1, "another-token", "wrong");
  EXPECT_EQ(WaitForExit(wrong, 30), 4);
  EXPECT_TRUE(Contains(Slurp(dir_.path() + "/wrong.err"), "refused this node: wrong job token"))
      << Slurp(dir_.path() + "/wrong.err");
  pid_t node1 = preflight(1, "job-token-27", "node1");
  int node0_exit = WaitForExit(node0, 40);
  EXPECT_TRUE(node0_exit == 0 || node0_exit == 1) << "node 0 ended with " << node0_exit << "\n"
                                                   << Slurp(dir_.path() + "/node0.err");
  WaitForExit(node1, 10);
  EXPECT_TRUE(Contains(Slurp(dir_.path() + "/node0.out") + Slurp(dir_.path() + "/node0.err"), "node 1"))
      << Slurp(dir_.path() + "/node0.out");
}

// ---- Untrusted JSON ---------------------------------------------------------

TEST_F(SharedNodeTest, AWorkersOddMetricsLinesNeverEndTheLauncher) {
  // A trainer that writes what the agent and train read: nulls, strings, deep nesting.
  std::string lines = R"({"step": 1, "loss": null}\n{"step": "2", "loss": "x"}\n)" + std::string(2000, '[') +
                      "\\n" R"({"step": 3, "loss": 1.5, "tokens_per_s": null})" "\\n";
  std::string script = dir_.Write("trainer.py",
      "import os, sys\n"
      "args = sys.argv[1:]\n"
      "path = args[args.index('--metrics-file') + 1]\n"
      "for f in (path, os.environ['PRIMUS_METRICS_FILE']):\n"
      "    with open(f, 'a') as out:\n"
      "        out.write('" + lines + "')\n");
  dir_.Write("torch.yaml", "exp_name: odd\nworkspace: " + dir_.path() + "/ws\nbackend: torch\n"
                           "torch: {script: " + script + "}\npython: {interpreter: /usr/bin/python3}\n"
                           "training: {steps: 3}\ndistributed: {nproc_per_node: 1}\n");
  ProcessResult result = Train({"direct", "--telemetry-interval", "0.2"}, {"--config", "torch.yaml"}, Options());
  EXPECT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(Json(Experiments().at(0) / "metadata.json")["status"], "succeeded");
  // analyze reads the same lines without ending.
  ProcessResult analyzed = RunPrimus({"direct", "--", "analyze", "run", Experiments().at(0).string()}, Options());
  EXPECT_EQ(analyzed.exit_code, 0) << analyzed.all();
}

TEST_F(SharedNodeTest, ADamagedMetadataFileIsReadNeverThrownOn) {
  fs::path experiment = dir_.path() + "/damaged";
  fs::create_directories(experiment / "logs");
  std::ofstream(experiment / "metadata.json")
      << R"({"status": 5, "exit_code": "x", "restarts": null, "argv": [1, "a"], "git": {"dirty": "yes"},)"
         R"( "root_cause": {"rank": "one", "signal": "x", "hung": 3}, "launcher": {"pid": "1"}, "task": ["x"]})";
  std::ofstream(experiment / "metrics.jsonl") << R"({"step": "1", "loss": 2})" "\n" R"({"step": 2, "loss": null})" "\n"
                                              << std::string(5000, '{') << "\n";
  ProcessResult analyzed = RunPrimus({"direct", "--", "analyze", "run", experiment.string()}, Options());
  EXPECT_TRUE(analyzed.exit_code == 0 || analyzed.exit_code == 4) << analyzed.all();
  EXPECT_NE(analyzed.exit_code, 134) << analyzed.all();
  EXPECT_FALSE(Contains(analyzed.all(), "terminate called")) << analyzed.all();
}

// ---- The launch and its record ----------------------------------------------

// node 1's console is a pipe nobody reads for 15 s, while its workers print
// far more than a pipe holds and node 0 loses a node after 4 s of silence.
TEST_F(SharedNodeTest, APausedConsoleNeverStopsAMultiNodeJob) {
  int port = FreePortPair();
  ASSERT_GT(port, 0);
  std::string fifo = dir_.path() + "/console";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // open, and not read
  ASSERT_GE(reader, 0);
  // 12 MB: more than a pipe and the console's buffer (8 MiB) hold.
  std::string worker = "seq 1 300000 | sed 's/$/ of output nobody reads yet/'; sleep 8; echo finished";
  ProcessOptions options = Options(90);
  options.env["PRIMUS_JOB_TOKEN"] = "console-test-token";
  auto start = [&](int rank, const std::string& out, const std::string& err) {
    return StartProcess({PRIMUS_BINARY, "direct", "--nnodes", "2", "--node-rank", std::to_string(rank),
                         "--master-addr", "127.0.0.1", "--master-port", std::to_string(port), "--heartbeat-timeout",
                         "4", "--log-dir", dir_.path() + "/logs" + std::to_string(rank), "--", "run", "/bin/sh", "-c",
                         worker},
                        out, err, options);
  };
  pid_t node0 = start(0, dir_.path() + "/node0.out", dir_.path() + "/node0.err");
  pid_t node1 = start(1, fifo, fifo);
  std::this_thread::sleep_for(std::chrono::seconds(15));
  // Now read node 1's console until it ends.
  int flags = ::fcntl(reader, F_GETFL);
  ::fcntl(reader, F_SETFL, flags & ~O_NONBLOCK);
  std::string console;
  std::thread drain([&] {
    char buffer[65536];
    ssize_t n;
    while ((n = ::read(reader, buffer, sizeof(buffer))) > 0) console.append(buffer, static_cast<size_t>(n));
  });
  int exit0 = WaitForExit(node0, 60);
  int exit1 = WaitForExit(node1, 60);
  drain.join();
  ::close(reader);
  std::string log0 = Slurp(dir_.path() + "/node0.err");
  EXPECT_EQ(exit0, 0) << log0;
  EXPECT_EQ(exit1, 0) << console.substr(console.size() > 4000 ? console.size() - 4000 : 0);
  EXPECT_FALSE(Contains(log0, "lost node 1")) << log0;
  EXPECT_TRUE(Contains(console, "the console is not being read")) << "dropping is said once";
  EXPECT_TRUE(Contains(console, "console lines were dropped while the console was not being read"));
  // The log files kept every line.
  std::string rank1 = Slurp(dir_.path() + "/logs1/attempt_0/" + ShortHost() + ".rank1.log");
  EXPECT_TRUE(Contains(rank1, " O 299999 of output")) << "the log file lost lines";
  EXPECT_TRUE(Contains(rank1, " O 300000 of output")) << "the log file lost lines";
}

// Ctrl-C at every moment of a launch: before the directory, while the
// snapshot's probes run, during a hook, while the workers run. metadata.json,
// when it exists, never stays "running".
TEST_F(SharedNodeTest, ASigintAtEveryPhaseLeavesARecordThatIsNeverRunning) {
  WriteExperiment("exp.yaml", "sleep 1; echo done", "hooks: {dirs: [hooks]}\n");
  dir_.Write("hooks/train/pretrain/01_slow.sh", "#!/bin/sh\nsleep 0.5\n");
  fs::permissions(dir_.path() + "/hooks/train/pretrain/01_slow.sh", fs::perms::owner_all);
  std::vector<double> delays = {0.02, 0.05, 0.1, 0.15, 0.25, 0.4, 0.6, 0.9, 1.3, 1.8};
  int with_record = 0;
  for (size_t i = 0; i < delays.size(); ++i) {
    fs::remove_all(dir_.path() + "/ws");
    std::string base = dir_.path() + "/sweep" + std::to_string(i);
    pid_t launcher = StartProcess({PRIMUS_BINARY, "direct", "--", "train", "pretrain", "--no-preflight", "--config",
                                   "exp.yaml"},
                                  base + ".out", base + ".err", Options());
    ASSERT_GT(launcher, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(delays[i]));
    ::kill(launcher, SIGINT);
    int code = WaitForExit(launcher, 30);
    EXPECT_TRUE(code == 130 || code == 0) << "after " << delays[i] << " s: exit " << code << "\n" << Slurp(base + ".err");
    for (const fs::path& experiment : Experiments()) {
      if (!fs::exists(experiment / "metadata.json")) continue;
      ++with_record;
      nlohmann::json metadata = Json(experiment / "metadata.json");
      EXPECT_NE(metadata["status"], "running") << "after " << delays[i] << " s:\n" << metadata.dump(2);
      if (code == 130) {
        EXPECT_EQ(metadata["status"], "interrupted") << metadata.dump(2);
      }
    }
  }
  EXPECT_GE(with_record, 5) << "most of the sweep came after the experiment directory existed";
}

// A disk that fills while the job runs: the end cannot be written, and the
// record that says "running" reads as ended without a record, never as running.
TEST_F(SharedNodeTest, AFullDiskLeavesARecordThatReadsAsEndedWithoutARecord) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to mount a small file system (a disk that fills)";
  fs::path ws = dir_.path() + "/ws";
  fs::create_directories(ws);
  if (::mount("tmpfs", ws.c_str(), "tmpfs", 0, "size=2m,mode=0755") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{ws.string()};
  WriteExperiment("exp.yaml", "dd if=/dev/zero of=" + ws.string() + "/fill bs=64k 2>/dev/null; exit 0");
  ProcessResult result = Train({"direct"}, {"--config", "exp.yaml"}, Options());
  fs::path experiment;
  for (const auto& entry : fs::directory_iterator(ws)) {
    if (entry.is_directory()) experiment = entry.path();
  }
  ASSERT_FALSE(experiment.empty()) << result.all();
  nlohmann::json metadata = Json(experiment / "metadata.json");
  ASSERT_TRUE(metadata.is_object()) << result.all();
  // The disk was full when the end came: the record could not be finished...
  ASSERT_EQ(metadata["status"], "running") << "the end was written after all:\n" << result.all();
  EXPECT_TRUE(Contains(result.err, "No space left on device")) << result.err;
  // ...and it never reads as running: its launcher is gone.
  ProcessResult analyzed = RunPrimus({"direct", "--", "analyze", "run", experiment.string()}, Options());
  EXPECT_TRUE(Contains(analyzed.all(), "ended without a record")) << analyzed.all();
  EXPECT_FALSE(Contains(analyzed.out, "status:     running")) << analyzed.out;
}

TEST_F(SharedNodeTest, EightySlowClientsOnTheMetricsPortDoNotLockAScraperOut) {
  int metrics = FreePort();
  ASSERT_GT(metrics, 0);
  std::string base = dir_.path() + "/agent";
  pid_t agent = StartProcess({PRIMUS_BINARY, "direct", "--metrics-port", std::to_string(metrics), "--", "run",
                              "/bin/sleep", "20"},
                             base + ".out", base + ".err", Options());
  ASSERT_GT(agent, 0);
  auto scrape = [&]() -> std::string {
    auto fd = io::ConnectToNode("127.0.0.1", metrics, 1);
    if (!fd) return "";
    std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    (void)!::send(fd->get(), request.data(), request.size(), MSG_NOSIGNAL);
    std::string response;
    FakeListener::ReadFor(fd->get(), &response, 2.0);
    return response;
  };
  ASSERT_TRUE(WaitFor([&] { return scrape().starts_with("HTTP/1.1 200"); }, 15)) << Slurp(base + ".err");
  std::vector<io::UniqueFd> slow;
  for (int i = 0; i < 80; ++i) {
    auto fd = io::ConnectToNode("127.0.0.1", metrics, 1);
    ASSERT_TRUE(fd.ok());
    (void)!::send(fd->get(), "G", 1, MSG_NOSIGNAL);
    slow.push_back(std::move(*fd));
  }
  for (int i = 0; i < 10; ++i) {
    auto begin = std::chrono::steady_clock::now();
    std::string response = scrape();
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << "scrape " << i << " was not answered";
    EXPECT_LT(SecondsSince(begin), 1.0) << "scrape " << i;
  }
  ::kill(agent, SIGTERM);
  WaitForExit(agent, 20);
}

}  // namespace
}  // namespace primus::testing
