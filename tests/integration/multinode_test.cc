// Multi-node jobs on one machine: two and three "hosts" as network namespaces
// (tests/support/netns_hosts.h), one node agent per host, started the way a
// user starts them by hand on each node:
//   primus-cli direct --nnodes N --node-rank R --master-addr <host1> --master-port P -- run ...
//
//   NetnsHostsTest       the fixture itself: names, addresses, TCP between
//                        hosts, teardown that leaves nothing behind.
//   MultiNodeLaunchTest  the rank contract across hosts (quick).
//   MultiNodeDdpTest     real gloo DDP across 2 and 3 hosts (slow: torch).
//   ControlChannelTest   the agents acting as one job (issue #6): a worker
//                        killed on one host tears down every host in < 1 s,
//                        a lost agent, the job token, restart generations,
//                        inconsistent nodes. Cheap `sleep` workers; each test
//                        takes a few seconds at most, and a bounded time when
//                        the agents misbehave.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "netns_hosts.h"
#include "processes.h"
#include "run_process.h"
#include "util/files.h"
#include "text.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::WaitFor;
using testing::ProcessAlive;
using testing::ReadOrEmpty;
using testing::SecondsSince;
using testing::HostProcess;
using testing::NetnsHosts;
using testing::ProcessOptions;
using Clock = std::chrono::steady_clock;

constexpr int kMasterPort = 29500;  // free in every fresh namespace

// Case-insensitive: the agents' wording may change, the key word may not.
bool ContainsIgnoringCase(const std::string& text, const std::string& word) {
  return ToLower(text).find(ToLower(word)) != std::string::npos;
}

// Names node `rank` of `hosts`: "node 1", "node rank 1", "node_rank=1", its
// host name or its address.
bool NamesNode(const std::string& text, int rank, const NetnsHosts& hosts) {
  std::regex node("node[ _-]?(rank)?[ =:]*" + std::to_string(rank) + "\\b", std::regex::icase);
  return std::regex_search(text, node) || text.find(hosts.Name(rank + 1)) != std::string::npos ||
         std::regex_search(text, std::regex(std::regex_replace(hosts.Address(rank + 1), std::regex("\\."), "\\.") +
                                            "\\b"));
}

class MultiNodeTest : public ::testing::Test {
 protected:
  // On failure, every agent's output (the assertions name only what failed).
  void TearDown() override {
    if (!HasFailure()) return;
    for (const auto& [label, out, err] : started_) {
      std::string text = "==== " + label + ": stdout\n" + ReadOrEmpty(out) + "==== " + label +
                         ": stderr\n" + ReadOrEmpty(err);
      fprintf(stderr, "%s", text.c_str());
    }
  }

  // N hosts, or a failed test saying why (namespaces need root: CI is root).
  ::testing::AssertionResult MakeHosts(int count) {
    auto hosts = NetnsHosts::Create(count);
    if (!hosts.ok()) return ::testing::AssertionFailure() << hosts.error().Format();
    hosts_ = std::move(*hosts);
    return ::testing::AssertionSuccess();
  }
  const std::string& dir() const { return hosts_->dir(); }
  std::string MasterAddr() const { return hosts_->Address(1); }

  // The environment of every agent: no user configuration, the job token,
  // gloo on eth0 (else it resolves the host name to loopback).
  ProcessOptions AgentOptions() const {
    ProcessOptions options;
    options.cwd = dir();
    options.env["HOME"] = dir();
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_JOB_TOKEN"] = token_;
    options.env["GLOO_SOCKET_IFNAME"] = "eth0";
    return options;
  }

  // primus-cli direct on `host` as node `node_rank` of `nnodes`.
  HostProcess StartAgentOn(int host, int node_rank, int nnodes, const std::vector<std::string>& flags,
                           const std::vector<std::string>& command, const ProcessOptions& options) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct",
                                     "--log-dir", fmt::format("{}/logs-host{}", dir(), host),
                                     "--nnodes", std::to_string(nnodes),
                                     "--node-rank", std::to_string(node_rank),
                                     "--master-addr", MasterAddr(),
                                     "--master-port", std::to_string(kMasterPort)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "run"});
    argv.insert(argv.end(), command.begin(), command.end());
    HostProcess agent = hosts_->Start(host, argv, options);
    EXPECT_TRUE(agent.started()) << ShellJoin(argv);
    started_.push_back({fmt::format("node {} on host{}", node_rank, host), agent.stdout_path(), agent.stderr_path()});
    return agent;
  }
  // Node `node_rank` on host node_rank+1.
  HostProcess StartAgent(int node_rank, int nnodes, const std::vector<std::string>& flags,
                         const std::vector<std::string>& command, const ProcessOptions& options) {
    return StartAgentOn(node_rank + 1, node_rank, nnodes, flags, command, options);
  }
  HostProcess StartAgent(int node_rank, int nnodes, const std::vector<std::string>& flags,
                         const std::vector<std::string>& command) {
    return StartAgent(node_rank, nnodes, flags, command, AgentOptions());
  }
  // One agent per host, the same flags and command everywhere.
  std::vector<HostProcess> StartJob(const std::vector<std::string>& flags, const std::vector<std::string>& command) {
    std::vector<HostProcess> agents;
    for (int rank = 0; rank < hosts_->count(); ++rank) agents.push_back(StartAgent(rank, hosts_->count(), flags, command));
    return agents;
  }

  // A worker that records its pid in DIR/<RANK>.pid and sleeps (as the
  // process itself: `exec`), so the test can SIGKILL it and poll for it.
  std::vector<std::string> SleepingWorker() const {
    return {"/bin/sh", "-c", "echo $$ > " + dir() + "/$RANK.pid.new && mv " + dir() + "/$RANK.pid.new " + dir() +
                                 "/$RANK.pid && exec sleep 600"};
  }
  // The pids of ranks 0..world-1 once all have written them; empty on timeout.
  std::vector<pid_t> WorkerPids(int world, double timeout_s) {
    std::vector<pid_t> pids;
    WaitFor([&] {
      pids.clear();
      for (int rank = 0; rank < world; ++rank) {
        auto text = ReadFile(dir() + "/" + std::to_string(rank) + ".pid");
        auto pid = text.ok() ? ParseInt(Trim(*text)) : std::nullopt;
        if (!pid) return false;
        pids.push_back(static_cast<pid_t>(*pid));
      }
      return true;
    }, timeout_s);
    if (static_cast<int>(pids.size()) != world) pids.clear();
    return pids;
  }
  bool AnyWorkerStarted(int world) const {
    for (int rank = 0; rank < world; ++rank) {
      if (PathExists(dir() + "/" + std::to_string(rank) + ".pid")) return true;
    }
    return false;
  }

  std::string token_ = "multinode-test-token-" + std::to_string(getpid());
  std::unique_ptr<NetnsHosts> hosts_;
  struct Started {
    std::string label, out, err;
  };
  std::vector<Started> started_;
};

// The exit status of `process` if it exits before `deadline`, else -1.
int ExitBy(HostProcess& process, Clock::time_point deadline) {
  return process.Wait(std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count()));
}

Clock::time_point In(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// --- the fixture ---

using NetnsHostsTest = MultiNodeTest;

TEST_F(NetnsHostsTest, EachHostHasItsNameAddressAndResolvesTheOthers) {
  char before[256] = {};
  gethostname(before, sizeof(before) - 1);
  ASSERT_TRUE(MakeHosts(3));
  for (int host = 1; host <= 3; ++host) {
    auto result = hosts_->Run(host, {"sh", "-c", "hostname; ip -4 -o addr show dev eth0; getent hosts host1 host2 host3"});
    ASSERT_EQ(result.exit_code, 0) << result.all();
    EXPECT_EQ(Split(result.out, '\n')[0], "host" + std::to_string(host)) << result.out;
    EXPECT_NE(result.out.find("inet " + hosts_->Address(host) + "/24"), std::string::npos) << result.out;
    for (int other = 1; other <= 3; ++other) {
      EXPECT_NE(result.out.find(hosts_->Address(other) + " "), std::string::npos) << result.out;
    }
  }
  // The machine's own host name and /etc/hosts are untouched.
  char after[256] = {};
  gethostname(after, sizeof(after) - 1);
  EXPECT_EQ(std::string(after), std::string(before));
  EXPECT_EQ(ReadFile("/etc/hosts")->find(hosts_->Address(1) + "\t"), std::string::npos);
}

TEST_F(NetnsHostsTest, HostsTalkTcpByNameAcrossTheBridge) {
  ASSERT_TRUE(MakeHosts(3));
  std::string server =
      "import socket\n"
      "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind(('0.0.0.0', 7777)); s.listen(2)\n"
      "open('" + dir() + "/listening', 'w').close()\n"
      "for _ in range(2):\n"
      "    c, (peer, _) = s.accept(); print(peer, c.recv(100).decode(), flush=True); c.close()\n";
  HostProcess listener = hosts_->Start(1, {"/usr/bin/python3", "-c", server});
  ASSERT_TRUE(WaitFor([&] { return PathExists(dir() + "/listening"); }, 10)) << listener.Err();
  for (int host : {2, 3}) {
    std::string client = "import socket; socket.create_connection(('host1', 7777), timeout=5).sendall(b'from-" +
                         hosts_->Name(host) + "')";
    ProcessOptions options;
    options.timeout_s = 10;
    auto sent = hosts_->Run(host, {"/usr/bin/python3", "-c", client}, options);
    EXPECT_EQ(sent.exit_code, 0) << sent.all();
  }
  EXPECT_EQ(listener.Wait(10), 0) << listener.Err();
  EXPECT_NE(listener.Out().find(hosts_->Address(2) + " from-host2"), std::string::npos) << listener.Out();
  EXPECT_NE(listener.Out().find(hosts_->Address(3) + " from-host3"), std::string::npos) << listener.Out();
}

TEST_F(NetnsHostsTest, TeardownKillsWhatRunsThereAndRemovesNamespacesBridgeAndFiles) {
  ASSERT_TRUE(MakeHosts(2));
  std::string pids = dir() + "/pids";
  // A process with a detached grandchild: teardown finds both by namespace.
  HostProcess process = hosts_->Start(2, {"sh", "-c", "setsid sleep 600 & echo $! >> " + pids +
                                                          "; echo $$ >> " + pids + "; exec sleep 600"});
  ASSERT_TRUE(WaitFor([&] { return ReadFile(pids).ok() && Split(Trim(*ReadFile(pids)), '\n').size() == 2; }, 10));
  std::vector<pid_t> started;
  for (const std::string& line : Split(Trim(*ReadFile(pids)), '\n')) started.push_back(*ParseInt(line));
  EXPECT_EQ(hosts_->ProcessesOn(2).size(), 2u);
  EXPECT_TRUE(hosts_->ProcessesOn(1).empty());
  std::vector<std::string> namespaces = {hosts_->Namespace(1), hosts_->Namespace(2)};
  std::string files = dir();

  hosts_.reset();
  for (pid_t pid : started) EXPECT_FALSE(ProcessAlive(pid)) << pid;
  EXPECT_EQ(process.Wait(1), 128 + SIGKILL);
  for (const std::string& ns : namespaces) EXPECT_FALSE(PathExists("/run/netns/" + ns)) << ns;
  auto links = testing::RunProcess({"ip", "-o", "link", "show"});
  EXPECT_EQ(links.out.find("pb" + std::to_string(getpid()) + "k"), std::string::npos) << links.out;
  EXPECT_EQ(links.out.find("pv" + std::to_string(getpid()) + "k"), std::string::npos) << links.out;
  EXPECT_FALSE(PathExists(files));
}

// --- the rank contract across hosts ---

using MultiNodeLaunchTest = MultiNodeTest;

TEST_F(MultiNodeLaunchTest, WorkersOnThreeHostsSeeTheJobWideRanks) {
  ASSERT_TRUE(MakeHosts(3));
  std::vector<std::string> worker = {
      "/bin/sh", "-c",
      "echo $RANK $LOCAL_RANK $WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT $(hostname) > " + dir() + "/$RANK.env"};
  std::vector<HostProcess> agents = StartJob({"--nproc-per-node", "2"}, worker);
  auto deadline = In(20);
  for (HostProcess& agent : agents) EXPECT_EQ(ExitBy(agent, deadline), 0);
  for (int rank = 0; rank < 6; ++rank) {
    auto line = ReadFile(dir() + "/" + std::to_string(rank) + ".env");
    ASSERT_TRUE(line.ok()) << "rank " << rank;
    EXPECT_EQ(std::string(Trim(*line)), fmt::format("{} {} 6 {} {} {} host{}", rank, rank % 2, rank / 2, MasterAddr(),
                                                    kMasterPort, rank / 2 + 1));
  }
}

// --- real gloo DDP across hosts ---

class MultiNodeDdpTest : public MultiNodeTest {
 protected:
  void RunDdp(int nnodes) {
    ASSERT_TRUE(MakeHosts(nnodes));
    std::vector<std::string> worker = {"/usr/bin/python3", std::string(PRIMUS_SOURCE_DIR) + "/examples/ddp-smoke/train.py",
                                       "--steps", "100"};
    std::vector<HostProcess> agents = StartJob({"--nproc-per-node", "1"}, worker);
    auto deadline = In(180);
    for (HostProcess& agent : agents) EXPECT_EQ(ExitBy(agent, deadline), 0);
    std::string node0 = agents[0].All();
    EXPECT_NE(node0.find(fmt::format("done: {} workers", nnodes)), std::string::npos);
    EXPECT_NE(node0.find("replicas in sync: True"), std::string::npos);
  }
};

TEST_F(MultiNodeDdpTest, GlooAcrossTwoHosts) { RunDdp(2); }
TEST_F(MultiNodeDdpTest, GlooAcrossThreeHosts) { RunDdp(3); }

// --- the agents as one job (control channel) ---
// Each test is bounded: a few seconds when the agents behave, not much more
// when they do not (every wait has a deadline; teardown kills the rest).

using ControlChannelTest = MultiNodeTest;

TEST_F(ControlChannelTest, WorkerKilledOnHost2TearsDownEveryHostWithinOneSecond) {
  ASSERT_TRUE(MakeHosts(3));
  std::vector<HostProcess> agents = StartJob({"--nproc-per-node", "2"}, SleepingWorker());
  std::vector<pid_t> pids = WorkerPids(6, 10);
  ASSERT_EQ(pids.size(), 6u) << "the workers did not all start";

  auto killed_at = Clock::now();
  kill(pids[2], SIGKILL);  // rank 2: node 1 (host2), local rank 0
  bool all_gone = WaitFor([&] { return std::none_of(pids.begin(), pids.end(), ProcessAlive); }, 2);
  double seconds = SecondsSince(killed_at);
  EXPECT_TRUE(all_gone) << "workers of other hosts still run 2 s after rank 2 was killed";
  EXPECT_LT(seconds, 1.0) << "from the kill to the last worker gone";

  auto deadline = killed_at + std::chrono::seconds(3);
  for (size_t node = 0; node < agents.size(); ++node) {
    EXPECT_EQ(ExitBy(agents[node], deadline), 128 + SIGKILL) << "node " << node << ": the root cause's code";
  }
  std::string banner = agents[0].All();
  EXPECT_NE(banner.find("host2"), std::string::npos) << "node 0's banner names the host";
  EXPECT_TRUE(std::regex_search(banner, std::regex("rank 2\\b"))) << "node 0's banner names the rank";
}

TEST_F(ControlChannelTest, AgentKilledOnHost2StopsTheOtherHosts) {
  ASSERT_TRUE(MakeHosts(3));
  std::vector<HostProcess> agents = StartJob({"--nproc-per-node", "1"}, SleepingWorker());
  std::vector<pid_t> pids = WorkerPids(3, 10);
  ASSERT_EQ(pids.size(), 3u) << "the workers did not all start";

  auto killed_at = Clock::now();
  agents[1].Kill(SIGKILL);
  auto deadline = killed_at + std::chrono::seconds(2);
  EXPECT_EQ(ExitBy(agents[1], deadline), 128 + SIGKILL);
  int node0 = ExitBy(agents[0], deadline);
  int node2 = ExitBy(agents[2], deadline);
  EXPECT_GT(node0, 0) << "node 0: still running (-1) 2 s after node 1's agent died, or exit 0";
  EXPECT_GT(node2, 0) << "node 2: still running (-1) 2 s after node 1's agent died, or exit 0";
  EXPECT_TRUE(WaitFor([&] { return std::none_of(pids.begin(), pids.end(), ProcessAlive); }, 0.5)) << "workers left";
  EXPECT_TRUE(ContainsIgnoringCase(agents[0].All(), "lost")) << "node 0 says node 1 was lost";
  EXPECT_TRUE(ContainsIgnoringCase(agents[2].All(), "lost")) << "node 2 says why it stopped";
}

TEST_F(ControlChannelTest, WrongTokenIsRefusedAndNode0NamesTheMissingNode) {
  ASSERT_TRUE(MakeHosts(2));
  ProcessOptions wrong = AgentOptions();
  wrong.env["PRIMUS_JOB_TOKEN"] = "not-the-job-token";
  auto started = Clock::now();
  HostProcess node0 = StartAgent(0, 2, {"--join-timeout", "2"}, SleepingWorker());
  HostProcess node1 = StartAgent(1, 2, {"--join-timeout", "2"}, SleepingWorker(), wrong);

  EXPECT_EQ(ExitBy(node1, started + std::chrono::seconds(4)), 4);
  EXPECT_TRUE(ContainsIgnoringCase(node1.Err(), "token")) << "node 1's error says its token was refused";
  EXPECT_EQ(ExitBy(node0, started + std::chrono::seconds(5)), 4);
  EXPECT_GE(SecondsSince(started), 1.8) << "node 0 waits out its join timeout";
  EXPECT_TRUE(NamesNode(node0.Err(), 1, *hosts_)) << "node 0 names node 1 as not joined";
  EXPECT_TRUE(ContainsIgnoringCase(node0.Err(), "join"));
  EXPECT_FALSE(AnyWorkerStarted(2)) << "no worker starts before every node joined";
}

TEST_F(ControlChannelTest, MissingTokenIsRefused) {
  ASSERT_TRUE(MakeHosts(2));
  ProcessOptions missing = AgentOptions();
  missing.env["PRIMUS_JOB_TOKEN"] = std::nullopt;
  auto started = Clock::now();
  HostProcess node0 = StartAgent(0, 2, {"--join-timeout", "2"}, SleepingWorker());
  HostProcess node1 = StartAgent(1, 2, {"--join-timeout", "2"}, SleepingWorker(), missing);

  EXPECT_EQ(ExitBy(node1, started + std::chrono::seconds(4)), 4);
  EXPECT_TRUE(ContainsIgnoringCase(node1.Err(), "token")) << "node 1's error names the missing token";
  EXPECT_EQ(ExitBy(node0, started + std::chrono::seconds(5)), 4);
  EXPECT_FALSE(AnyWorkerStarted(2));
}

TEST_F(ControlChannelTest, RestartGenerationsAgreeAcrossHosts) {
  ASSERT_TRUE(MakeHosts(2));
  // Attempt 0: rank 2 (node 1) fails with 3 once all 4 ranks have started;
  // the others sleep and must be torn down. Attempt 1: everyone exits 0. Each
  // worker appends "RANK RESTART_COUNT" to a shared file.
  std::string log = dir() + "/generations";
  std::string script =
      "echo $RANK $TORCHELASTIC_RESTART_COUNT >> " + log + "\n"
      "[ \"$TORCHELASTIC_RESTART_COUNT\" = 0 ] || exit 0\n"
      "if [ \"$RANK\" = 2 ]; then\n"
      "  while [ $(grep -c ' 0$' " + log + ") -lt 4 ]; do sleep 0.01; done\n"
      "  exit 3\n"
      "fi\n"
      "exec sleep 600\n";
  std::vector<HostProcess> agents =
      StartJob({"--nproc-per-node", "2", "--max-restarts", "1", "--restart-backoff", "0"}, {"/bin/sh", "-c", script});
  auto deadline = In(6);
  for (size_t node = 0; node < agents.size(); ++node) {
    EXPECT_EQ(ExitBy(agents[node], deadline), 0) << "node " << node << " after one job-wide restart";
  }
  auto text = ReadFile(log);
  ASSERT_TRUE(text.ok());
  std::map<std::string, int> lines;  // "RANK COUNT" -> how often
  for (const std::string& line : Split(Trim(*text), '\n')) ++lines[line];
  std::map<std::string, int> expected = {{"0 0", 1}, {"1 0", 1}, {"2 0", 1}, {"3 0", 1},
                                         {"0 1", 1}, {"1 1", 1}, {"2 1", 1}, {"3 1", 1}};
  EXPECT_EQ(lines, expected) << *text;
}

TEST_F(ControlChannelTest, DifferentNprocPerNodeIsRefusedNamingBothNodes) {
  ASSERT_TRUE(MakeHosts(2));
  auto started = Clock::now();
  HostProcess node0 = StartAgent(0, 2, {"--nproc-per-node", "1", "--join-timeout", "2"}, SleepingWorker());
  HostProcess node1 = StartAgent(1, 2, {"--nproc-per-node", "2", "--join-timeout", "2"}, SleepingWorker());
  auto deadline = started + std::chrono::seconds(4);
  EXPECT_EQ(ExitBy(node0, deadline), 4);
  EXPECT_EQ(ExitBy(node1, deadline), 4);
  EXPECT_LT(SecondsSince(started), 1.8) << "refused when node 1 joins, not at the join timeout";
  EXPECT_TRUE(NamesNode(node0.Err(), 0, *hosts_) && NamesNode(node0.Err(), 1, *hosts_)) << "names both nodes";
  EXPECT_FALSE(AnyWorkerStarted(3));
}

TEST_F(ControlChannelTest, DuplicateNodeRankIsRefusedNamingTheConflictingHosts) {
  ASSERT_TRUE(MakeHosts(3));
  auto started = Clock::now();
  std::vector<std::string> flags = {"--join-timeout", "2"};
  HostProcess node0 = StartAgentOn(1, 0, 3, flags, SleepingWorker(), AgentOptions());
  HostProcess first = StartAgentOn(2, 1, 3, flags, SleepingWorker(), AgentOptions());
  HostProcess second = StartAgentOn(3, 1, 3, flags, SleepingWorker(), AgentOptions());  // node rank 1 again
  auto deadline = started + std::chrono::seconds(5);
  EXPECT_EQ(ExitBy(node0, deadline), 4);
  EXPECT_EQ(ExitBy(first, deadline), 4);
  EXPECT_EQ(ExitBy(second, deadline), 4);
  std::string message = node0.Err();
  EXPECT_TRUE(message.find("host2") != std::string::npos || message.find(hosts_->Address(2)) != std::string::npos)
      << "node 0 names host2, one of the two claiming node rank 1";
  EXPECT_TRUE(message.find("host3") != std::string::npos || message.find(hosts_->Address(3)) != std::string::npos)
      << "node 0 names host3, the other";
  EXPECT_FALSE(AnyWorkerStarted(3));
}

}  // namespace
}  // namespace primus

namespace primus {
namespace {

// An agent that stops answering without closing its connection (SIGSTOP: a
// hung host, a network partition) is lost after --heartbeat-timeout.
TEST_F(ControlChannelTest, SilentAgentIsLostAfterTheHeartbeatTimeout) {
  ASSERT_TRUE(MakeHosts(2));
  std::vector<HostProcess> agents = StartJob({"--nproc-per-node", "1", "--heartbeat-timeout", "1.5"}, SleepingWorker());
  std::vector<pid_t> pids = WorkerPids(2, 10);
  ASSERT_EQ(pids.size(), 2u) << "the workers did not all start";
  auto stopped_at = Clock::now();
  agents[1].Kill(SIGSTOP);
  EXPECT_EQ(ExitBy(agents[0], In(5)), 1) << "node 0 ends with 1 when a node is lost";
  double took = SecondsSince(stopped_at);
  EXPECT_GE(took, 1.0) << "not before the heartbeat timeout";
  EXPECT_FALSE(ProcessAlive(pids[0])) << "node 0's worker stopped";
  EXPECT_TRUE(ContainsIgnoringCase(agents[0].All(), "no heartbeat")) << agents[0].All();
  agents[1].Kill(SIGCONT);
  EXPECT_EQ(ExitBy(agents[1], In(5)), 1) << "node 1 notices it lost node 0 once it runs again";
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(pids[1]); }, 2)) << "node 1's worker stopped";
}

// Node 0's workers finish; node 1's keep running past --exit-barrier-timeout:
// node 0 names node 1, and the whole job ends (1) without waiting forever.
TEST_F(ControlChannelTest, ExitBarrierNamesTheNodeThatNeverReports) {
  ASSERT_TRUE(MakeHosts(2));
  std::string script = "echo $$ > " + dir() + "/$RANK.pid; [ \"$GROUP_RANK\" = 0 ] && exit 0; exec sleep 600";
  std::vector<HostProcess> agents =
      StartJob({"--nproc-per-node", "1", "--exit-barrier-timeout", "1"}, {"/bin/sh", "-c", script});
  auto deadline = In(6);
  EXPECT_EQ(ExitBy(agents[0], deadline), 1);
  EXPECT_EQ(ExitBy(agents[1], deadline), 1);
  std::string node0 = agents[0].All();
  EXPECT_TRUE(ContainsIgnoringCase(node0, "never reported")) << node0;
  EXPECT_TRUE(NamesNode(node0, 1, *hosts_)) << node0;
  std::vector<pid_t> pids = WorkerPids(2, 1);
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(pids[1]); }, 2)) << "node 1's worker stopped";
}

}  // namespace
}  // namespace primus
