// Telemetry of a running job (docs/monitor.md) through the real binary:
//   - two workers on one node, one of them three times slower per step:
//     while the job runs, node 0's telemetry/job.json shows each worker's
//     pid, CPU, memory and step, and names the slow rank as a straggler;
//     after it, history.jsonl holds one line per sample and the last
//     job.json says how the job ended;
//   - two agents on loopback (--nnodes 2): node 1's sample reaches node 0's
//     job.json over the control channel.
// The workers are plain python3 writing the metrics lines themselves; each
// run takes a few seconds: slow.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_process.h"
#include "start_process.h"
#include "wait_for.h"

namespace primus {
namespace {

using Json = nlohmann::json;
using testing::ProcessOptions;
using testing::StartProcess;
using testing::TempDir;
using testing::WaitFor;
using testing::WaitForExit;

// Each rank appends a metrics line per step until the test drops a `stop`
// file (or 90 s pass); rank 1 reports (and takes) 0.3 s per step, the others 0.1 s.
constexpr char kWorker[] = R"(
import json, os, sys, time
rank = int(os.environ["RANK"])
path = os.environ["PRIMUS_METRICS_FILE"]
stop = os.path.join(sys.argv[1], "stop")
step_time = 0.3 if rank == 1 else 0.1
out = open(path, "a", buffering=1)
step, start = 0, time.time()
while not os.path.exists(stop) and time.time() - start < 90:
    time.sleep(step_time)
    step += 1
    out.write(json.dumps({"step": step, "total_steps": 100000, "loss": 5.0 - rank - step / 1000,
                          "tokens_per_s": 1000.0 / step_time, "step_time_s": step_time}) + "\n")
out.write('{"step": ')  # a partial line at the end is never read
)";

// A port P such that P and P+1 (the control channel) are both free now.
int FreePortPair() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    int port = ntohs(address.sin_port);
    ::close(fd);
    if (port >= 65535) continue;
    int next = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in second = address;
    second.sin_port = htons(static_cast<uint16_t>(port + 1));
    bool free = ::bind(next, reinterpret_cast<sockaddr*>(&second), sizeof(second)) == 0;
    ::close(next);
    if (free) return port;
  }
  return 0;
}

Json ReadJson(const std::string& path) {
  return Json::parse(testing::Slurp(path), nullptr, /*allow_exceptions=*/false);
}

std::vector<Json> ReadLines(const std::string& path) {
  std::vector<Json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line, nullptr, false));
  return lines;
}

bool NamesRankStraggler(const Json& view, int rank) {
  if (!view.is_object() || !view.contains("stragglers")) return false;
  for (const Json& straggler : view["stragglers"]) {
    if (straggler.value("kind", "") == "rank" && straggler.value("rank", -1) == rank) return true;
  }
  return false;
}

// Every worker of every node has a pid, a CPU share, a resident size and a step.
bool WorkersComplete(const Json& view, size_t nodes, size_t workers_per_node) {
  if (!view.is_object() || !view.contains("nodes") || view["nodes"].size() != nodes) return false;
  for (const Json& node : view["nodes"]) {
    if (node["workers"].size() != workers_per_node) return false;
    for (const Json& worker : node["workers"]) {
      if (worker.value("pid", 0) <= 0 || !worker.contains("cpu_percent") || !worker.contains("rss_bytes") ||
          !worker.contains("step") || worker.value("state", "") == "exited") {
        return false;
      }
    }
  }
  return true;
}

class TelemetryTest : public ::testing::Test {
 protected:
  std::string Out(const std::string& name) const { return dir_.path() + "/" + name; }
  TempDir dir_;
  std::string script_ = dir_.Write("worker.py", kWorker);
};

TEST_F(TelemetryTest, JobJsonShowsTheWorkersAndNamesTheSlowRank) {
  std::string logs = Out("logs");
  pid_t agent = StartProcess({PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--telemetry-interval", "0.5",
                              "--log-dir", logs, "--", "run", "python3", script_, dir_.path()},
                             Out("agent.out"), Out("agent.err"));
  ASSERT_GT(agent, 0);
  std::string job_file = logs + "/telemetry/job.json";
  Json view;
  bool complete = WaitFor([&] {
    view = ReadJson(job_file);
    return WorkersComplete(view, 1, 2) && NamesRankStraggler(view, 1);
  }, 40);
  std::ofstream(Out("stop")) << "";
  int code = WaitForExit(agent, 30);
  ASSERT_TRUE(complete) << view.dump(1) << "\n" << testing::Slurp(Out("agent.err"));
  EXPECT_EQ(code, 0) << testing::Slurp(Out("agent.err"));

  EXPECT_EQ(view["format"], "primus-job-telemetry/1");
  EXPECT_EQ(view["job"]["state"], "running");
  EXPECT_EQ(view["job"]["interval_s"], 0.5);
  EXPECT_EQ(view["job"]["world_size"], 2);
  EXPECT_TRUE(view["job"].contains("step"));
  EXPECT_EQ(view["job"]["median_step_time_s"], 0.2);
  const Json& node = view["nodes"][0];
  EXPECT_EQ(node["node_rank"], 0);
  ASSERT_EQ(node["host_stats"]["net"].size(), 1u);
  EXPECT_EQ(node["host_stats"]["net"][0]["interface"], "lo");  // a single-node job
  EXPECT_TRUE(node["host_stats"].contains("mem_total_bytes"));
  for (const Json& straggler : view["stragglers"]) {
    if (straggler["kind"] != "rank") continue;
    EXPECT_EQ(straggler["rank"], 1);
    EXPECT_EQ(straggler["ratio"], 1.5);
    EXPECT_GE(straggler["samples"].get<int>(), 3);
  }
  // rank 0's own file is where the agent said it would be
  std::ifstream metrics(logs + "/attempt_0/" + node["host"].get<std::string>() + ".rank0.metrics.jsonl");
  EXPECT_TRUE(metrics.good());

  Json last = ReadJson(job_file);
  EXPECT_EQ(last["job"]["state"], "succeeded");
  for (const Json& worker : last["nodes"][0]["workers"]) EXPECT_EQ(worker["state"], "exited");
  std::vector<Json> history = ReadLines(logs + "/telemetry/history.jsonl");
  ASSERT_GE(history.size(), 5u);
  for (const Json& line : history) ASSERT_TRUE(line.is_object());
  EXPECT_EQ(history.back()["state"], "succeeded");
  bool straggler_in_history = false;
  for (const Json& line : history) {
    if (line["stragglers"] == Json::array({1})) straggler_in_history = true;
  }
  EXPECT_TRUE(straggler_in_history);
  EXPECT_EQ(history.back()["ranks"].size(), 2u);
}

TEST_F(TelemetryTest, NodeOnesSampleReachesNodeZerosJobJson) {
  int port = FreePortPair();
  ASSERT_GT(port, 0);
  std::vector<pid_t> agents;
  for (int node = 0; node < 2; ++node) {
    agents.push_back(StartProcess(
        {PRIMUS_BINARY, "direct", "--nnodes", "2", "--node-rank", std::to_string(node), "--master-addr", "127.0.0.1",
         "--master-port", std::to_string(port), "--nproc-per-node", "1", "--telemetry-interval", "0.5", "--log-dir",
         Out("logs" + std::to_string(node)), "--", "run", "python3", script_, dir_.path()},
        Out("agent" + std::to_string(node) + ".out"), Out("agent" + std::to_string(node) + ".err")));
    ASSERT_GT(agents.back(), 0);
  }
  std::string job_file = Out("logs0") + "/telemetry/job.json";
  Json view;
  bool complete = WaitFor([&] {
    view = ReadJson(job_file);
    return WorkersComplete(view, 2, 1);
  }, 40);
  std::ofstream(Out("stop")) << "";
  int code0 = WaitForExit(agents[0], 30), code1 = WaitForExit(agents[1], 30);
  ASSERT_TRUE(complete) << view.dump(1) << "\n" << testing::Slurp(Out("agent0.err"));
  EXPECT_EQ(code0, 0) << testing::Slurp(Out("agent0.err"));
  EXPECT_EQ(code1, 0) << testing::Slurp(Out("agent1.err"));

  EXPECT_EQ(view["job"]["nnodes"], 2);
  EXPECT_EQ(view["job"]["world_size"], 2);
  const Json& member = view["nodes"][1];
  EXPECT_EQ(member["node_rank"], 1);
  EXPECT_EQ(member["workers"][0]["rank"], 1);
  EXPECT_TRUE(member.contains("age_s"));
  EXPECT_LT(member["age_s"].get<double>(), 5.0);
  EXPECT_EQ(member["host_stats"]["net"][0]["interface"], "lo");  // routes to 127.0.0.1
  EXPECT_EQ(view["job"]["loss"], view["nodes"][0]["workers"][0]["loss"]);  // rank 0's
  // Only node 0 writes the job's files.
  EXPECT_FALSE(testing::Slurp(Out("logs1") + "/telemetry/job.json").size() > 0);
  EXPECT_EQ(ReadJson(job_file)["job"]["state"], "succeeded");
}

}  // namespace
}  // namespace primus
