// Slurm runtime latency against its anchor, in the same run, on the local
// test cluster (slurmctld + 2 slurmd in network namespaces,
// tests/support/slurm_cluster.h):
//
//   srun:   `srun -N 2 --ntasks-per-node=1 true`
//           vs `primus-cli slurm srun -N 2 -- direct -- run /bin/true`
//           (one node agent per node, control channel, start and exit barriers)
//   sbatch: `sbatch -N 2 --wait --wrap 'srun true'` (Slurm polls every 10 s)
//           vs `primus-cli slurm sbatch -N 2 --wait -- run /bin/true`
//           (squeue every 0.25 s), submission to the exit code in hand
//
//   build/bench/slurm_launch [srun runs, default 10] [sbatch runs, default 3]
//
// Runs alternate between the two, so load on the machine hits both alike.
// Needs root and the packages of scripts/setup.sh.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "run_process.h"
#include "slurm_cluster.h"

namespace {

using primus::testing::ProcessOptions;
using primus::testing::ProcessResult;
using primus::testing::RunProcess;
using primus::testing::SlurmCluster;
using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Seconds that `argv` took; exits the bench when it failed.
double Timed(const std::vector<std::string>& argv, const ProcessOptions& options) {
  auto start = Clock::now();
  ProcessResult result = RunProcess(argv, options);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (result.exit_code != 0) {
    std::fprintf(stderr, "failed (exit %d): %s\n%s\n", result.exit_code, argv.front().c_str(), result.all().c_str());
    std::exit(1);
  }
  return seconds;
}

void Report(const char* name, const std::vector<double>& anchor, const std::vector<double>& ours,
            const char* anchor_name) {
  double a = Median(anchor), o = Median(ours);
  std::printf("%-7s %-34s median %8.1f ms   primus-cli median %8.1f ms   ratio %.2fx (%zu runs)\n", name,
              anchor_name, a * 1000, o * 1000, o / a, ours.size());
}

}  // namespace

int main(int argc, char** argv) {
  int srun_runs = argc > 1 ? std::atoi(argv[1]) : 10;
  int sbatch_runs = argc > 2 ? std::atoi(argv[2]) : 3;
  if (std::string why = SlurmCluster::Unavailable(); !why.empty()) {
    std::fprintf(stderr, "no local Slurm cluster: %s\n", why.c_str());
    return 4;
  }
  std::string error;
  auto started = Clock::now();
  std::unique_ptr<SlurmCluster> cluster = SlurmCluster::Start({}, &error);
  if (!cluster) {
    std::fprintf(stderr, "the Slurm cluster did not start: %s\n", error.c_str());
    return 4;
  }
  std::printf("cluster of 2 nodes up in %.1f s\n",
              std::chrono::duration<double>(Clock::now() - started).count());

  primus::testing::TempDir dir;
  ProcessOptions options;
  options.cwd = dir.path();
  options.env = cluster->Environment();
  options.env["HOME"] = dir.path();
  options.env["PRIMUS_DIRECT_LOG_DIR"] = dir.path() + "/agent-logs";
  options.timeout_s = 120;
  const std::string primus = PRIMUS_BINARY;

  std::vector<double> srun, ours_srun;
  for (int i = 0; i < srun_runs; ++i) {
    srun.push_back(Timed({"srun", "-N", "2", "--ntasks-per-node=1", "true"}, options));
    ours_srun.push_back(Timed({primus, "slurm", "srun", "-N", "2", "--", "direct", "--", "run", "/bin/true"}, options));
  }
  Report("srun", srun, ours_srun, "srun -N 2 true");

  std::vector<double> sbatch, ours_sbatch;
  for (int i = 0; i < sbatch_runs; ++i) {
    sbatch.push_back(Timed({"sbatch", "-N", "2", "--wait", "-o", dir.path() + "/slurm-%j.out", "--wrap", "srun true"},
                           options));
    ours_sbatch.push_back(Timed({primus, "slurm", "sbatch", "-N", "2", "--wait", "--", "run", "/bin/true"}, options));
  }
  Report("sbatch", sbatch, ours_sbatch, "sbatch -N 2 --wait --wrap 'srun true'");
  return 0;
}
