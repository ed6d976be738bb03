// Faults of a multi-node job, with real agents (`primus-cli direct --nnodes 2
// --node-rank R`) on loopback, so no root is needed:
//   - a hang on node 1 whose stack dumps take longer than the heartbeat
//     timeout: node 1 is not declared lost, both nodes exit with one code, and
//     node 0's root cause names the hung rank;
//   - strangers on node 0's control port (hundreds of idle connections,
//     garbage, an oversized line): refused and logged without a flood, node
//     0's memory stays bounded, and the real node still joins;
//   - a worker stuck at exit after the work finished: exit 6, said plainly.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "free_port.h"
#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::Contains;
using testing::FreePortPair;
using testing::ProcessOptions;
using testing::StartProcess;
using testing::WaitForExit;

long RssKiB(pid_t pid) {
  auto status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!status.ok()) return -1;
  for (const std::string& line : Split(*status, '\n')) {
    if (line.starts_with("VmRSS:")) return ParseInt(Trim(line.substr(6, line.size() - 6 - 3))).value_or(-1);
  }
  return -1;
}

class MultiNodeFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-multinode-fault-XXXXXX";
    dir_ = mkdtemp(pattern);
    port_ = FreePortPair();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    for (pid_t pid : agents_) {
      if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
    }
    if (HasFailure()) {
      for (size_t node = 0; node < agents_.size(); ++node) {
        fprintf(stderr, "==== node %zu stderr\n%s\n", node, Stderr(static_cast<int>(node)).c_str());
      }
    }
    std::filesystem::remove_all(dir_);
  }
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_;
    options.env["HOME"] = dir_;
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_JOB_TOKEN"] = "fault-test-token";
    options.env["PATH"] = path_;
    return options;
  }
  pid_t StartNode(int node_rank, int nnodes, const std::vector<std::string>& flags,
                  const std::vector<std::string>& command) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct",
                                     "--log-dir", dir_ + "/logs-node" + std::to_string(node_rank),
                                     "--nnodes", std::to_string(nnodes),
                                     "--node-rank", std::to_string(node_rank),
                                     "--master-addr", "127.0.0.1",
                                     "--master-port", std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "run"});
    argv.insert(argv.end(), command.begin(), command.end());
    std::string base = dir_ + "/node" + std::to_string(node_rank);
    pid_t pid = StartProcess(argv, base + ".out", base + ".err", Options());
    EXPECT_GT(pid, 0);
    agents_.push_back(pid);
    return pid;
  }
  std::string Stderr(int node) {
    auto text = ReadFile(dir_ + "/node" + std::to_string(node) + ".err");
    return text.ok() ? *text : "";
  }

  std::string dir_;
  int port_ = 0;
  std::string path_ = std::string("/usr/bin:/bin");
  std::vector<pid_t> agents_;
};

// Before: node 1 dumped its hung workers' stacks one after another with the
// event loop blocked, sent no heartbeat, and node 0 declared it lost ("no
// heartbeat for 10 s") while node 1 exited with another code.
TEST_F(MultiNodeFaultTest, SlowStackDumpsOnAHungNodeDoNotGetItDeclaredLost) {
  std::string tools = dir_ + "/tools";
  ASSERT_TRUE(MakeDirs(tools).ok());
  // 2.5 s per dump, 2 hung workers: 5 s one after another, over the 2 s heartbeat timeout.
  ASSERT_TRUE(WriteFileAtomic(tools + "/py-spy", "#!/bin/sh\nsleep 2.5\necho \"Thread 7 (idle): MainThread of pid $3\"\n",
                              0755).ok());
  path_ = tools + ":/usr/bin:/bin";
  // Node 0's workers keep printing; node 1's go silent.
  std::string script = "if [ \"$GROUP_RANK\" = 0 ]; then while true; do echo tick; sleep 0.2; done; fi; exec sleep 600";
  std::vector<std::string> flags = {"--nproc-per-node", "2", "--hang-timeout", "1", "--heartbeat-timeout", "2",
                                    "--term-timeout", "2"};
  pid_t node0 = StartNode(0, 2, flags, {"/bin/sh", "-c", script});
  pid_t node1 = StartNode(1, 2, flags, {"/bin/sh", "-c", script});
  int code0 = WaitForExit(node0, 20);
  int code1 = WaitForExit(node1, 20);
  EXPECT_EQ(code0, code1) << "every node ends with the job's one exit code";
  EXPECT_EQ(code0, 128 + SIGTERM) << "the hung rank's status after the agent stopped it";
  std::string out0 = Stderr(0), out1 = Stderr(1);
  EXPECT_FALSE(Contains(out0, "lost node 1")) << out0;
  EXPECT_FALSE(Contains(out0, "no heartbeat for 2 s")) << out0;
  EXPECT_TRUE(Contains(out0, "hung: no output and no heartbeat for 1 s")) << "the banner names the hang timeout\n" << out0;
  EXPECT_TRUE(Contains(out0, "root cause rank 2") || Contains(out0, "root cause rank 3")) << out0;
  EXPECT_TRUE(Contains(out0, "hang")) << out0;
  EXPECT_TRUE(Contains(out1, "Thread 7 (idle)")) << "node 1 logged the hung rank's stacks\n" << out1;
}

// Every node hangs at once (a collective that never completes): each node
// reports its own hang, node 0 picks one root cause, and all exit alike.
TEST_F(MultiNodeFaultTest, AHangOnEveryNodeEndsTheJobOnceWithOneCode) {
  std::vector<std::string> flags = {"--nproc-per-node", "1", "--hang-timeout", "1", "--term-timeout", "2"};
  pid_t node0 = StartNode(0, 2, flags, {"/bin/sh", "-c", "exec sleep 600"});
  pid_t node1 = StartNode(1, 2, flags, {"/bin/sh", "-c", "exec sleep 600"});
  int code0 = WaitForExit(node0, 20);
  int code1 = WaitForExit(node1, 20);
  EXPECT_EQ(code0, 128 + SIGTERM);
  EXPECT_EQ(code1, code0);
  std::string out0 = Stderr(0);
  EXPECT_TRUE(Contains(out0, "root cause rank")) << out0;
  EXPECT_TRUE(Contains(out0, "hang")) << out0;
  EXPECT_FALSE(Contains(out0, "lost node")) << out0;
}

TEST_F(MultiNodeFaultTest, StrangersOnTheControlPortAreBoundedAndLoggedWithoutAFlood) {
  std::vector<std::string> flags = {"--nproc-per-node", "1", "--join-timeout", "60"};
  pid_t node0 = StartNode(0, 2, flags, {"/bin/sh", "-c", "echo ran"});
  // Wait for the control port.
  std::vector<int> sockets;
  auto connect_one = [&]() -> int {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port_ + 1));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  };
  int first = -1;
  for (int i = 0; i < 500 && first < 0; ++i) {
    first = connect_one();
    if (first < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(first, 0) << "node 0's control port never opened";
  sockets.push_back(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long rss_before = RssKiB(node0);
  // 300 idle connections, 50 that send garbage lines, 5 that stream 1 MiB without a newline.
  for (int i = 0; i < 300; ++i) {
    int fd = connect_one();
    if (fd >= 0) sockets.push_back(fd);
  }
  for (int i = 0; i < 50; ++i) {
    int fd = connect_one();
    if (fd < 0) continue;
    std::string garbage = "GET / HTTP/1.0\r\n\r\n{\"type\": 12}\n\xff\xfe not json\n";
    (void)!::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL);
    sockets.push_back(fd);
  }
  std::string megabyte(1 << 20, 'z');
  for (int i = 0; i < 5; ++i) {
    int fd = connect_one();
    if (fd < 0) continue;
    (void)!::send(fd, megabyte.data(), megabyte.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    sockets.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  long rss_after = RssKiB(node0);
  EXPECT_GT(rss_before, 0);
  EXPECT_LT(rss_after - rss_before, 4096) << "node 0 grew by " << (rss_after - rss_before) << " KiB";
  // The real node still joins, and the job runs.
  pid_t node1 = StartNode(1, 2, flags, {"/bin/sh", "-c", "echo ran"});
  EXPECT_EQ(WaitForExit(node1, 20), 0);
  EXPECT_EQ(WaitForExit(node0, 20), 0);
  for (int fd : sockets) ::close(fd);
  std::string log = Stderr(0);
  size_t dropped = 0;
  for (const std::string& line : Split(log, '\n')) dropped += Contains(line, "control channel: dropped") ? 1 : 0;
  EXPECT_GE(dropped, 1u) << "garbage and floods are logged\n" << log;
  EXPECT_LE(dropped, 12u) << "but not line by line\n" << log;
  EXPECT_TRUE(Contains(log, "more refused or dropped connections were not logged")) << log;
}

TEST_F(MultiNodeFaultTest, AWorkerStuckAtExitIsStoppedAndTheExitCodeIs6) {
  std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--log-dir", dir_ + "/logs", "--nproc-per-node", "2",
                                   "--exit-grace", "1", "--", "run", "/bin/sh", "-c",
                                   "if [ $RANK = 0 ]; then echo done; exit 0; fi; exec sleep 600"};
  pid_t agent = StartProcess(argv, dir_ + "/node0.out", dir_ + "/node0.err", Options());
  agents_.push_back(agent);
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(WaitForExit(agent, 20), 6);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 8);
  std::string log = Stderr(0);
  EXPECT_TRUE(Contains(log, "the work finished (rank 0 exited 0)")) << log;
  EXPECT_TRUE(Contains(log, "rank 1 (local rank 1")) << log;
  EXPECT_TRUE(Contains(log, "stuck at exit")) << log;
}

}  // namespace
}  // namespace primus
