// Progress read from the frameworks' own output, through the real agent:
// stand-in workers print the lines Megatron-LM and TorchTitan print (their
// format strings at the pinned releases, ../shared/upstream/: Megatron-LM
// core_v0.19.0 training.py training_log, TorchTitan v0.2.2
// components/metrics.py with its Color codes and logging.py's "[titan] ..."
// prefix) and nothing else; the job view (`monitor --once --json`), the
// metrics port and `analyze run` must see their steps, loss, throughput and
// a straggler. Seconds each: slow.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "free_port.h"
#include "run_process.h"
#include "start_process.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using nlohmann::json;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;
using testing::WaitFor;

// Megatron-LM's training_log: only the last rank prints it, followed by its
// timer block (megatron/core/timers.py at --timing-log-level 1, in the
// --timing-log-option given as the second argument: minmax or all).
const char kMegatronWorker[] = R"(
import os, sys, time, datetime
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
steps = int(sys.argv[1])
option = sys.argv[2] if len(sys.argv) > 2 else "minmax"
# ms per iteration of each timer on each rank: rank 1 computes longest.
times = {"forward-backward": [70.0 + (20.0 if r == 1 else 0.0) for r in range(world)],
         "batch-generator": [2.0] * world,
         "all-grads-sync": [15.0 - (10.0 if r == 1 else 0.0) for r in range(world)],
         "optimizer": [8.0] * world}
def timers_string():
    if option == "all":
        output_string = 'times across ranks (ms):'
        for name, per_rank in times.items():
            output_string += '\n  {}:'.format(name)
            for r in range(world):
                output_string += '\n     rank {:2d}: {:.2f}'.format(r, per_rank[r])
        return output_string
    output_string = '(min, max) time across ranks (ms):'
    for name, per_rank in times.items():
        output_string += '\n    {}: ({:.2f}, {:.2f})'.format((name + ' ').ljust(48, '.'), min(per_rank), max(per_rank))
    return output_string
print("building GPT model ...", flush=True)
for iteration in range(1, steps + 1):
    time.sleep(0.1)
    if rank != world - 1:
        continue
    log_string = f" [{datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S.%f')}]"
    log_string += ' iteration {:8d}/{:8d} |'.format(iteration, steps)
    log_string += ' consumed samples: {:12d} |'.format(iteration * 64)
    log_string += ' elapsed time per iteration (ms): {:.1f} |'.format(100.0)
    log_string += f' throughput per GPU (TFLOP/s/GPU): {321.5:.1f} |'
    log_string += f' learning rate: {3e-4:.6E} |'
    log_string += f' global batch size: {64:5d} |'
    log_string += ' {}: {:.6E} |'.format('lm loss', 8.0 / iteration)
    log_string += f' loss scale: {1.0:.1f} |'
    log_string += f' grad norm: {1.5:.3f} |'
    log_string += ' number of skipped iterations: {:3d} |'.format(0)
    log_string += ' number of nan iterations: {:3d} |'.format(0)
    print(log_string, flush=True)
    print(timers_string(), flush=True)
)";

// TorchTitan's step line through its logger, on every rank; rank 1 is slow.
const char kTorchTitanWorker[] = R"(
import os, sys, time, logging
red, green, orange, turquoise = "\033[31m", "\033[32m", "\033[38;2;180;60;0m", "\033[38;2;54;234;195m"
blue, cyan, magenta, reset = "\033[34m", "\033[36m", "\033[35m", "\033[39m"
logger = logging.getLogger()
logger.setLevel(logging.INFO)
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"))
logger.addHandler(handler)
rank = int(os.environ["RANK"])
steps = int(sys.argv[1])
for step in range(1, steps + 1):
    time.sleep(0.3 if rank == 1 else 0.1)
    logger.info(
        f"{red}step: {step:2}  "
        f"{green}loss: {6.0 / step:8.5f}  "
        f"{orange}grad_norm: {1.25:7.4f}  "
        f"{turquoise}memory: {10.5:5.2f}GiB"
        f"({13.1:.2f}%)  "
        f"{blue}tps: {round(12345.6):,}  "
        f"{cyan}tflops: {1234.567:,.2f}  "
        f"{magenta}mfu: {45.678:.2f}%{reset}")
    handler.flush()
)";

class FrameworkProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string help = RunPrimus({"direct", "--help"}, Options()).out;
    if (help.find("--progress-format") == std::string::npos) GTEST_SKIP() << "this build reads no printed progress";
    log_dir_ = JoinPath(dir_.path(), "logs");
  }
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.env["TMPDIR"] = dir_.path();
    options.timeout_s = 120;
    return options;
  }
  std::string Script(const std::string& name, const char* text) {
    std::string path = JoinPath(dir_.path(), name);
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }
  pid_t Start(const std::string& script, int nproc, int steps, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nproc-per-node", std::to_string(nproc),
                                     "--telemetry-interval", "0.3", "--log-dir", log_dir_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "run", "/usr/bin/python3", script, std::to_string(steps)});
    return testing::StartProcess(argv, JoinPath(dir_.path(), "job.out"), JoinPath(dir_.path(), "job.err"), Options());
  }
  json Once() {
    ProcessResult once = RunPrimus({"monitor", log_dir_, "--once", "--json"}, Options());
    if (once.exit_code != 0) return json();
    json view = json::parse(once.out, nullptr, false);
    return view.is_discarded() ? json() : view;
  }
  static const json* Worker(const json& view, int rank) {
    if (!view.is_object() || !view.contains("nodes")) return nullptr;
    for (const json& node : view["nodes"]) {
      if (!node.contains("workers") || !node["workers"].is_array()) continue;
      for (const json& worker : node["workers"]) {
        if (worker.value("rank", -1) == rank) return &worker;
      }
    }
    return nullptr;
  }
  std::string JobErr() { return testing::Slurp(JoinPath(dir_.path(), "job.err")); }
  testing::TempDir dir_;
  std::string log_dir_;
};

TEST_F(FrameworkProgressTest, MegatronsLastRankFeedsTheJobViewAndTheMetricsPort) {
  int port = testing::FreePort();
  pid_t job = Start(Script("megatron_stand_in.py", kMegatronWorker), 3, 40, {"--metrics-port", std::to_string(port)});
  ASSERT_GT(job, 0);
  json view;
  bool seen = WaitFor([&] {
    view = Once();
    const json* last = Worker(view, 2);
    return last != nullptr && last->contains("step") && last->contains("loss");
  }, 60);
  ASSERT_TRUE(seen) << view.dump(1) << JobErr();
  const json* last = Worker(view, 2);
  EXPECT_EQ((*last)["total_steps"], 40);
  EXPECT_DOUBLE_EQ((*last)["tflops_per_gpu"].get<double>(), 321.5);
  EXPECT_DOUBLE_EQ((*last)["step_time_s"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ((*last)["lr"].get<double>(), 3e-4);
  EXPECT_FALSE(Worker(view, 0)->contains("step")) << "rank 0 printed no progress";
  EXPECT_TRUE(view["job"].contains("step")) << view["job"].dump();
  // The same figures on /metrics, in Prometheus's units.
  ProcessResult scraped = testing::RunProcess(
      {"/usr/bin/python3", "-c",
       "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())",
       "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
  EXPECT_EQ(scraped.exit_code, 0) << scraped.all();
  EXPECT_NE(scraped.out.find("primus_rank_model_flops_per_second{node=\"0\""), std::string::npos) << scraped.out;
  EXPECT_NE(scraped.out.find("rank=\"2\",local_rank=\"2\"} 321500000000000"), std::string::npos) << scraped.out;
  // Its timer block: where the step goes, for the whole job.
  WaitFor([&] {
    view = Once();
    last = Worker(view, 2);
    return last != nullptr && last->contains("time_parts");
  }, 30);
  ASSERT_NE(last, nullptr);
  ASSERT_TRUE(last->contains("time_parts")) << last->dump();
  EXPECT_DOUBLE_EQ((*last)["time_parts"]["forward-backward"]["s"].get<double>(), 0.09);
  EXPECT_DOUBLE_EQ((*last)["time_parts"]["forward-backward"]["fastest_s"].get<double>(), 0.07);
  scraped = testing::RunProcess(
      {"/usr/bin/python3", "-c",
       "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())",
       "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
  // compute: forward-backward less batch-generator and all-grads-sync (90 - 2 - 15 ms).
  EXPECT_NE(scraped.out.find("rank=\"2\",local_rank=\"2\",phase=\"compute\"} 0.073"), std::string::npos)
      << scraped.out;
  EXPECT_EQ(testing::WaitForExit(job, 60), 0) << JobErr();
}

TEST_F(FrameworkProgressTest, AnalyzeFindsMegatronsCurveInItsLastRanksLog) {
  std::string script = Script("megatron_stand_in.py", kMegatronWorker);
  std::string workspace = JoinPath(dir_.path(), "ws");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_.path(), "exp.yaml"),
                              "exp_name: megatron-stand-in\n"
                              "workspace: " + workspace + "\n"
                              "backend: command\n"
                              "distributed: {nproc_per_node: 3}\n"
                              "command: {argv: [/usr/bin/python3, " + script + ", '20', all]}\n").ok());
  ProcessResult train = RunPrimus({"direct", "--telemetry-interval", "0.3", "--", "train", "pretrain", "--config",
                                   JoinPath(dir_.path(), "exp.yaml")},
                                  Options());
  ASSERT_EQ(train.exit_code, 0) << train.all();
  std::string experiment;
  for (const auto& entry : std::filesystem::directory_iterator(workspace)) experiment = entry.path();
  ASSERT_FALSE(experiment.empty());
  ProcessResult analyzed = RunPrimus({"analyze", "run", experiment, "--json"}, Options());
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.all();
  json summary = json::parse(analyzed.out, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << analyzed.out;
  EXPECT_NE(summary.dump().find("rank2"), std::string::npos) << "the metrics come from rank 2's log:\n" << summary.dump(1);
  EXPECT_NE(summary.dump().find("\"loss_last\":0.4"), std::string::npos) << "8/20:\n" << summary.dump(1);
  // The report says where the step time goes, from Megatron's timers, and
  // names the rank they show as slowest.
  std::string page = JoinPath(dir_.path(), "report.html");
  ProcessResult report = RunPrimus({"analyze", "run", experiment, "--html", page}, Options());
  ASSERT_EQ(report.exit_code, 0) << report.all();
  std::string html = testing::Slurp(page);
  size_t section = html.find("<section id=\"step-parts\">");
  ASSERT_NE(section, std::string::npos);
  std::string parts = html.substr(section, html.find("</section>", section) - section);
  EXPECT_NE(parts.find("data-slowest-rank=\"1\""), std::string::npos) << parts;
  EXPECT_NE(parts.find("printed by rank 2 for the whole job"), std::string::npos) << parts;
  EXPECT_NE(parts.find("data-layer=\"communication\" data-value=\"0.015\""), std::string::npos) << parts;
  // And TensorBoard has the job's run, under the experiment.
  EXPECT_TRUE(std::filesystem::is_directory(JoinPath(experiment, "tensorboard/attempt_0"))) << experiment;
}

TEST_F(FrameworkProgressTest, TorchTitansColouredLinesOnEveryRankShowTheStraggler) {
  pid_t job = Start(Script("torchtitan_stand_in.py", kTorchTitanWorker), 3, 30);
  ASSERT_GT(job, 0);
  json view;
  bool straggler = WaitFor([&] {
    view = Once();
    if (!view.is_object() || !view.contains("stragglers")) return false;
    for (const json& entry : view["stragglers"]) {
      if (entry.value("kind", "") == "rank" && entry.value("rank", -1) == 1) return true;
    }
    return false;
  }, 60);
  EXPECT_TRUE(straggler) << view.dump(1) << JobErr();
  const json* fast = Worker(view, 0);
  ASSERT_NE(fast, nullptr) << view.dump(1);
  EXPECT_DOUBLE_EQ((*fast)["tokens_per_s"].get<double>(), 12346);
  EXPECT_NEAR((*fast)["mfu"].get<double>(), 0.4568, 1e-9);  // printed "45.68%"
  EXPECT_TRUE(fast->contains("step_time_s")) << "from the interval between lines";
  EXPECT_EQ(testing::WaitForExit(job, 60), 0) << JobErr();
}

TEST_F(FrameworkProgressTest, FormatNoneReadsNothingAndABadFormatIsNamed) {
  pid_t job = Start(Script("megatron_stand_in.py", kMegatronWorker), 2, 8, {"--progress-format", "none"});
  ASSERT_GT(job, 0);
  EXPECT_EQ(testing::WaitForExit(job, 60), 0) << JobErr();
  json view = Once();
  const json* last = Worker(view, 1);
  ASSERT_NE(last, nullptr) << view.dump(1);
  EXPECT_FALSE(last->contains("step")) << view.dump(1);

  ProcessResult bad = RunPrimus({"direct", "--progress-format", "megatrom", "--", "run", "/bin/true"}, Options());
  EXPECT_EQ(bad.exit_code, 3) << bad.all();
  EXPECT_NE(bad.err.find("megatrom"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("megatron"), std::string::npos) << "the hint lists the formats:\n" << bad.err;
}

}  // namespace
}  // namespace primus
