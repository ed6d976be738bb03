// Elastic jobs across hosts made of network namespaces, launched the way a
// torchrun user launches them, through our `torchrun` link on every host:
//
//   torchrun --nnodes 2:3 --rdzv-backend c10d --rdzv-endpoint <host1>:29400 ...
//            examples/gpt/train.py ... --ckpt-dir D --ckpt-interval 1
//
// The workers are the example GPT trainer (real torch, gloo), which saves a
// checkpoint after every step and resumes from the last one at whatever
// world size it is restarted with. Each test changes the membership while the
// job trains, and checks that the job goes on at the new world size from its
// last checkpoint, that the agents' logs name what happened, and that the
// job ends with 0 on the surviving hosts:
//   AKilledAgent...   SIGKILL of host3's agent (its workers die with it)
//   ACutLink...       host3's cable pulled: no FIN, no RST; lost after the
//                     heartbeat timeout (1 s x 3 here)
//   ANodeJoining...   a third agent started while two train: scale-up to 3
//   BelowTheMinimum.. 2:2, a node lost: the job ends with exit code 1
//   Etcd...           --rdzv-backend etcd-v2 with a real etcd server on
//                     host1: the first agent to claim the run id coordinates,
//                     a member's loss leaves the job training
// Each takes 15-40 s on a 2-core machine (torch starts in every generation).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cctype>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "netns_hosts.h"
#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::WaitFor;
using testing::HostProcess;
using testing::NetnsHosts;
using testing::ProcessOptions;
using Clock = std::chrono::steady_clock;

const std::string kSource = PRIMUS_SOURCE_DIR;
constexpr int kRendezvousPort = 29400;

std::string Torchrun() { return DirName(PRIMUS_BINARY) + "/torchrun"; }

// The trainer's progress lines ("step 7/80 loss ... world 3"), as rank 0
// prints them on host1: step and world size, in order.
struct Step {
  int step = 0;
  int world = 0;
};
std::optional<int> NumberAfter(const std::string& line, const std::string& word) {
  size_t at = line.find(word);
  if (at == std::string::npos) return std::nullopt;
  at += word.size();
  size_t end = at;
  while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
  if (end == at) return std::nullopt;
  return std::stoi(line.substr(at, end - at));
}
std::vector<Step> Steps(const std::string& out) {
  std::vector<Step> steps;
  for (const std::string& line : Split(out, '\n')) {
    if (line.find(" loss ") == std::string::npos) continue;
    std::optional<int> step = NumberAfter(line, "] step "), world = NumberAfter(line, " world ");
    if (step && world) steps.push_back(Step{*step, *world});
  }
  return steps;
}

class ElasticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::RunProcess({"/usr/bin/python3", "-c", "import torch"}).exit_code != 0) {
      GTEST_SKIP() << "/usr/bin/python3 has no torch";
    }
    auto hosts = NetnsHosts::Create(3);
    ASSERT_TRUE(hosts.ok()) << hosts.error().Format();
    hosts_ = std::move(*hosts);
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (agents_[i]) fprintf(stderr, "==== agent on host%zu\n%s\n", i + 1, agents_[i]->All().c_str());
    }
  }

  // The torchrun line of every host; `nnodes` is "2:3" or "2:2".
  void StartAgent(int host, const std::string& nnodes, int steps = 80) {
    StartAgentWith(host, nnodes, steps,
                   {"--rdzv-backend", "c10d", "--rdzv-endpoint",
                    hosts_->Address(1) + ":" + std::to_string(kRendezvousPort)});
  }
  // Every agent's environment: the job's token, gloo on the hosts' link.
  ProcessOptions AgentOptions() const {
    ProcessOptions options;
    options.cwd = hosts_->dir();
    options.env["HOME"] = hosts_->dir();
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_JOB_TOKEN"] = "elastic-test-token";
    options.env["GLOO_SOCKET_IFNAME"] = "eth0";
    options.env["PYTHON_EXEC"] = "/usr/bin/python3";
    options.env["OMP_NUM_THREADS"] = "1";
    return options;
  }
  void StartAgentWith(int host, const std::string& nnodes, int steps, const std::vector<std::string>& rendezvous) {
    ProcessOptions options = AgentOptions();
    std::vector<std::string> argv = {Torchrun(), "--nnodes", nnodes, "--nproc-per-node", "1"};
    argv.insert(argv.end(), rendezvous.begin(), rendezvous.end());
    std::vector<std::string> rest = {
        "--rdzv-id", "elastic",
        // Start as soon as the others are there; a silent node is lost after 3 s.
        "--rdzv-conf", "last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=3",
        "--log-dir", hosts_->dir() + "/logs",
        kSource + "/examples/gpt/train.py", "--model", "tiny", "--seq-len", "32", "--micro-batch", "2",
        // Divisible by 2 x every world size the job may have: the same batches at 2 and 3 workers.
        "--global-batch", "12", "--steps", std::to_string(steps), "--warmup", "2", "--log-interval", "1",
        "--ckpt-dir", hosts_->dir() + "/ckpt", "--ckpt-interval", "1", "--keep-last", "3", "--device", "cpu",
        "--threads", "1"};
    argv.insert(argv.end(), rest.begin(), rest.end());
    if (agents_.size() < static_cast<size_t>(host)) agents_.resize(static_cast<size_t>(host));
    agents_[static_cast<size_t>(host) - 1] = std::make_unique<HostProcess>(hosts_->Start(host, argv, options));
    ASSERT_TRUE(agent(host).started());
  }
  HostProcess& agent(int host) { return *agents_[static_cast<size_t>(host) - 1]; }

  // Waits for rank 0's first step at `world` after `after` steps seen; the step.
  std::optional<Step> WaitForStepAt(int world, size_t after, double seconds) {
    std::optional<Step> found;
    WaitFor(
        [&] {
          std::vector<Step> steps = Steps(agent(1).Out());
          for (size_t i = after; i < steps.size(); ++i) {
            if (steps[i].world == world) {
              found = steps[i];
              return true;
            }
          }
          return false;
        },
        seconds);
    return found;
  }

  // The step the trainer said it resumed from last, or -1.
  int LastResumedStep() {
    int step = -1;
    for (const std::string& line : Split(agent(1).Out(), '\n')) {
      if (line.find("resumed from ") == std::string::npos) continue;
      if (std::optional<int> at = NumberAfter(line, " at step ")) step = *at;
    }
    return step;
  }

  // The part every scenario shares: three hosts train at world size 3.
  Step TrainOnThreeHosts() {
    for (int host = 1; host <= 3; ++host) StartAgent(host, "2:3");
    std::optional<Step> step = WaitForStepAt(3, 0, 90);
    EXPECT_TRUE(step.has_value()) << "the job never trained at world size 3";
    // A few steps in, so that there are checkpoints to resume from.
    WaitFor([&] { return !Steps(agent(1).Out()).empty() && Steps(agent(1).Out()).back().step >= 4; }, 30);
    return Steps(agent(1).Out()).back();
  }

  // After the event: the survivors train on at world size 2, from the last
  // checkpoint, and finish.
  void ExpectTheJobGoesOnAtWorldSize2(size_t steps_before, int last_step_before, const std::string& lost_what) {
    std::optional<Step> resumed = WaitForStepAt(2, steps_before, 90);
    ASSERT_TRUE(resumed.has_value()) << "no step at world size 2 after the loss";
    // Every step was checkpointed: the restart resumes from the last one
    // taken before the loss (the step in flight may not have been saved).
    int from = LastResumedStep();
    EXPECT_GE(from, last_step_before - 1) << "a checkpoint was lost";
    EXPECT_EQ(resumed->step, from + 1);
    for (int host : {1, 2}) EXPECT_EQ(agent(host).Wait(120), 0) << "host" << host;
    std::string log = agent(1).All();
    // Node ranks go to nodes in the order they joined: host3 was node 1 or 2.
    EXPECT_TRUE(log.find("lost node 1 (host3)") != std::string::npos ||
                log.find("lost node 2 (host3)") != std::string::npos)
        << "the agent names the lost node";
    EXPECT_NE(log.find(lost_what), std::string::npos);
    EXPECT_NE(log.find("starting generation 1 with 2 nodes: node 0 (host1), node 1 (host2)"), std::string::npos);
    EXPECT_NE(agent(2).All().find("joined; starting generation 0 as node"), std::string::npos);
    EXPECT_NE(agent(1).Out().find("world size changed: 3 -> 2 (restart 1)"), std::string::npos);
  }

  std::unique_ptr<NetnsHosts> hosts_;
  std::vector<std::unique_ptr<HostProcess>> agents_;
};

// direct.exclude_bad_nodes in an elastic job: the rank on host2 stalls
// outside the all_reduce; node 0 names host2 as the hang's culprit, host2's
// agent leaves (exit code 5) and the others go on at once with 2 nodes,
// where the job finishes.
TEST_F(ElasticTest, TheHangsCulpritLeavesAndTheJobGoesOnSmaller) {
  for (int host = 1; host <= 3; ++host) {
    ProcessOptions options = AgentOptions();
    options.env["PRIMUS_DIRECT_EXCLUDE_BAD_NODES"] = "true";
    std::vector<std::string> argv = {
        Torchrun(), "--nnodes", "2:3", "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
        hosts_->Address(1) + ":" + std::to_string(kRendezvousPort), "--rdzv-id", "bad-node", "--rdzv-conf",
        "last_call_timeout=3", "--max-restarts", "1", "--log-dir", hosts_->dir() + "/logs",
        kSource + "/tests/workers/hang_on_host.py", "host2"};
    // The watchdog (torchrun has no flag for it): direct.hang_timeout.
    options.env["PRIMUS_DIRECT_HANG_TIMEOUT"] = "15";
    if (agents_.size() < static_cast<size_t>(host)) agents_.resize(static_cast<size_t>(host));
    agents_[static_cast<size_t>(host) - 1] = std::make_unique<HostProcess>(hosts_->Start(host, argv, options));
    ASSERT_TRUE(agent(host).started());
  }
  EXPECT_EQ(agent(2).Wait(180), 5) << "host2's agent leaves the job as a bad node";
  EXPECT_EQ(agent(1).Wait(120), 0);
  EXPECT_EQ(agent(3).Wait(60), 0);
  std::string log = agent(1).All();
  EXPECT_NE(log.find("(host2) from the job (the hang's culprit"), std::string::npos) << log;
  EXPECT_NE(log.find("going on with 2 nodes"), std::string::npos) << log;
  EXPECT_NE(agent(2).All().find("this node (host2) is excluded from the job"), std::string::npos) << agent(2).All();
  std::string done = agent(1).Out() + agent(3).Out();
  EXPECT_NE(done.find("on host1: done, world 2"), std::string::npos) << done;
  EXPECT_NE(done.find("on host3: done, world 2"), std::string::npos) << done;
}

TEST_F(ElasticTest, AKilledAgentLeavesTheOthersTrainingAtTheNewWorldSize) {
  Step before = TrainOnThreeHosts();
  size_t seen = Steps(agent(1).Out()).size();
  agent(3).Kill(SIGKILL);
  ExpectTheJobGoesOnAtWorldSize2(seen, before.step, "connection closed");
  // host3's worker did not outlive its agent.
  EXPECT_TRUE(WaitFor([&] { return hosts_->ProcessesOn(3).empty(); }, 10));
}

TEST_F(ElasticTest, ACutLinkIsALostNodeAfterTheHeartbeatTimeout) {
  Step before = TrainOnThreeHosts();
  size_t seen = Steps(agent(1).Out()).size();
  ASSERT_TRUE(hosts_->SetLink(3, false).ok());
  auto cut = Clock::now();
  ExpectTheJobGoesOnAtWorldSize2(seen, before.step, "no heartbeat for 3 s");
  (void)cut;
  // host3, cut off, loses the coordinator too, stops its worker and ends.
  EXPECT_NE(agent(3).Wait(30), 0);
  EXPECT_NE(agent(3).All().find("lost the coordinator"), std::string::npos) << agent(3).All();
  EXPECT_TRUE(hosts_->ProcessesOn(3).empty());
}

TEST_F(ElasticTest, ANodeJoiningARunningJobScalesItUp) {
  StartAgent(1, "2:3");
  StartAgent(2, "2:3");
  ASSERT_TRUE(WaitForStepAt(2, 0, 90).has_value()) << "the job never trained at world size 2";
  WaitFor([&] { return Steps(agent(1).Out()).back().step >= 4; }, 30);
  size_t seen = Steps(agent(1).Out()).size();
  int before = Steps(agent(1).Out()).back().step;
  StartAgent(3, "2:3");
  std::optional<Step> scaled = WaitForStepAt(3, seen, 90);
  ASSERT_TRUE(scaled.has_value()) << "the job never trained at world size 3";
  EXPECT_GE(LastResumedStep(), before - 1) << "a checkpoint was lost";
  for (int host = 1; host <= 3; ++host) EXPECT_EQ(agent(host).Wait(120), 0) << "host" << host;
  EXPECT_NE(agent(1).All().find("joined the running job"), std::string::npos);
  EXPECT_NE(agent(1).All().find("starting generation 1 with 3 nodes"), std::string::npos);
  EXPECT_NE(agent(3).All().find("joined; starting generation 1 as node 2 of 3"), std::string::npos);
}

TEST_F(ElasticTest, BelowTheMinimumTheJobEndsWithExitCode1) {
  StartAgent(1, "2:2", 400);
  StartAgent(2, "2:2", 400);
  ASSERT_TRUE(WaitForStepAt(2, 0, 90).has_value());
  agent(2).Kill(SIGKILL);
  EXPECT_EQ(agent(1).Wait(60), 1);
  EXPECT_NE(agent(1).All().find("only 1 node left, fewer than the minimum of 2"), std::string::npos);
}

TEST_F(ElasticTest, EtcdNamesTheCoordinatorAndAMembersLossLeavesTheJobTraining) {
  if (::access("/usr/bin/etcd", X_OK) != 0) GTEST_SKIP() << "/usr/bin/etcd is missing: scripts/setup.sh installs it";
  std::string client = "http://" + hosts_->Address(1) + ":2379";
  HostProcess etcd = hosts_->Start(
      1, {"/usr/bin/etcd", "--name", "t", "--data-dir", hosts_->dir() + "/etcd", "--listen-client-urls", client,
          "--advertise-client-urls", client, "--listen-peer-urls", "http://127.0.0.1:2380",
          "--initial-advertise-peer-urls", "http://127.0.0.1:2380", "--initial-cluster", "t=http://127.0.0.1:2380",
          "--enable-v2=true"});
  ASSERT_TRUE(etcd.started());
  std::vector<std::string> rendezvous = {"--rdzv-backend", "etcd-v2", "--rdzv-endpoint",
                                         hosts_->Address(1) + ":2379"};
  for (int host = 1; host <= 3; ++host) StartAgentWith(host, "2:3", 80, rendezvous);
  // Whoever claimed the run id first coordinates (and runs rank 0).
  int coordinator = 0;
  WaitFor(
      [&] {
        for (int host = 1; host <= 3; ++host) {
          if (agent(host).Err().find("this node coordinates") != std::string::npos) coordinator = host;
        }
        return coordinator != 0;
      },
      60);
  ASSERT_NE(coordinator, 0) << "no agent says it coordinates";
  auto out = [&] { return agent(coordinator).Out(); };
  ASSERT_TRUE(WaitFor([&] { return !Steps(out()).empty() && Steps(out()).back().world == 3; }, 90));
  WaitFor([&] { return Steps(out()).back().step >= 4; }, 30);
  size_t seen = Steps(out()).size();
  int member = coordinator == 3 ? 2 : 3;
  agent(member).Kill(SIGKILL);
  EXPECT_TRUE(WaitFor(
      [&] {
        std::vector<Step> steps = Steps(out());
        return steps.size() > seen && steps.back().world == 2;
      },
      90))
      << "no step at world size 2 after the loss";
  for (int host = 1; host <= 3; ++host) {
    if (host != member) {
      EXPECT_EQ(agent(host).Wait(120), 0) << "host" << host;
    }
  }
  EXPECT_NE(agent(coordinator).All().find("(host" + std::to_string(member) + ")"), std::string::npos);
  // The coordinator withdrew its claim: the run id is free for the next job.
  testing::ProcessResult keys = hosts_->Run(
      1, {"/usr/bin/python3", "-c",
          "import sys, urllib.request, urllib.error\n"
          "try: urllib.request.urlopen(sys.argv[1]); print('present')\n"
          "except urllib.error.HTTPError as e: print(e.code)",
          client + "/v2/keys/primus/rdzv/elastic/coordinator"});
  EXPECT_EQ(Trim(keys.out), "404") << keys.out << keys.err;
}

}  // namespace
}  // namespace primus
