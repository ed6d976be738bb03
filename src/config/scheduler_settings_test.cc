#include "config/scheduler_settings.h"

#include <gtest/gtest.h>

#include <map>

namespace primus::config {
namespace {

TEST(SchedulerSettingsTest, UnknownPlatformIsAUsageError) {
  Result<SchedulerSettings> found = DetectScheduler(Environment({}), "slurmm");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code, ExitCode::kUsage);
  EXPECT_NE(found.error().hint.find("auto, slurm"), std::string::npos);
}

TEST(SchedulerSettingsTest, NothingDetectedInsideAnAgentsWorker) {
  Result<SchedulerSettings> found = DetectScheduler(
      Environment({{"LOCAL_RANK", "0"}, {"TORCHELASTIC_RUN_ID", "x"}, {"WORLD_SIZE", "2"}, {"RANK", "1"},
                   {"MASTER_ADDR", "10.0.0.1"}}),
      "auto");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->scheduler, "");
  EXPECT_TRUE(found->settings.empty());
}

// Inside a container the Slurm variables are gone; the container runtime
// carries the requeue count as PRIMUS_SCHEDULER_RESTARTS (platform none).
TEST(SchedulerSettingsTest, RestartsCarriedIntoAContainerCount) {
  Result<SchedulerSettings> found = DetectScheduler(Environment({{"PRIMUS_SCHEDULER_RESTARTS", "2"}}), "none");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->restart_count, 2);

  Result<SchedulerSettings> bad = DetectScheduler(Environment({{"PRIMUS_SCHEDULER_RESTARTS", "two"}}), "none");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUnavailable);
  EXPECT_NE(bad.error().message.find("PRIMUS_SCHEDULER_RESTARTS=two"), std::string::npos) << bad.error().message;
}

// Open MPI's mpirun, one agent per rank (the variables as Open MPI 4.1 sets them).
TEST(SchedulerSettingsTest, OpenMpiRanksAreNodes) {
  Environment env({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
                   {"OMPI_MCA_ess_base_jobid", "827719681"},
                   {"OMPI_MCA_orte_hnp_uri", "827719680.0;tcp://192.0.2.2,10.88.0.1:55227;tcp6://[fd00::2]:38245"},
                   {"SLURM_JOB_ID", "77"}});  // mpirun inside an allocation: Open MPI's own variables win
  Result<SchedulerSettings> found = DetectScheduler(env, "auto");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->scheduler, "openmpi");
  EXPECT_EQ(found->job_id, "mpi-827719681");
  EXPECT_EQ(found->agents_on_this_host, 1);
  std::map<std::string, std::string> settings;
  for (const auto& setting : found->settings) settings[setting.key] = setting.value + " <- " + setting.variables;
  EXPECT_EQ(settings["direct.nnodes"], "4 <- OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(settings["direct.node_rank"], "2 <- OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(settings["direct.master_addr"], "192.0.2.2 <- OMPI_MCA_orte_hnp_uri");
  EXPECT_EQ(settings["direct.master_port"], "29500 <- default");
  // MASTER_ADDR and MASTER_PORT passed with mpirun -x win.
  Environment given({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"MASTER_ADDR", "node0"},
                     {"MASTER_PORT", "29411"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  found = DetectScheduler(given, "mpi");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->agents_on_this_host, 2);
  settings.clear();
  for (const auto& setting : found->settings) settings[setting.key] = setting.value;
  EXPECT_EQ(settings["direct.master_addr"], "node0");
  EXPECT_EQ(settings["direct.master_port"], "29411");
  // A rank beyond the size, a garbage URI: errors naming the variable, or no guess.
  Result<SchedulerSettings> bad = DetectScheduler(Environment({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}}), "auto");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUnavailable);
  EXPECT_NE(bad.error().message.find("OMPI_COMM_WORLD_RANK=2"), std::string::npos) << bad.error().message;
  Result<SchedulerSettings> hostless = DetectScheduler(
      Environment({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_MCA_orte_hnp_uri", "1.0;tcp://$(rm)"}}),
      "auto");
  ASSERT_FALSE(hostless.ok());
  EXPECT_NE(hostless.error().hint.find("MASTER_ADDR"), std::string::npos) << hostless.error().hint;
}

// MPICH's Hydra names no host: MASTER_ADDR is required; after Slurm, whose
// srun --mpi=pmi2 sets PMI_RANK too.
TEST(SchedulerSettingsTest, HydraRanksNeedMasterAddr) {
  Environment hydra({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}, {"MPI_LOCALNRANKS", "1"}, {"MASTER_ADDR", "10.0.0.5"}});
  Result<SchedulerSettings> found = DetectScheduler(hydra, "auto");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->scheduler, "mpich");
  Result<SchedulerSettings> no_master =
      DetectScheduler(Environment({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}, {"MPI_LOCALNRANKS", "1"}}), "mpi");
  ASSERT_FALSE(no_master.ok());
  EXPECT_NE(no_master.error().message.find("MASTER_ADDR is not set"), std::string::npos);
  // A PMI rank without Hydra's MPI_LOCALNRANKS (Cray PMI, srun --mpi=pmi2 outside a step's variables) is not Hydra.
  Result<SchedulerSettings> pmi_only = DetectScheduler(Environment({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}}), "auto");
  ASSERT_TRUE(pmi_only.ok());
  EXPECT_EQ(pmi_only->scheduler, "");
  Result<SchedulerSettings> asked = DetectScheduler(Environment({}), "mpi");
  ASSERT_FALSE(asked.ok());
  EXPECT_NE(asked.error().message.find("no MPI launcher's variables"), std::string::npos);
}

}  // namespace
}  // namespace primus::config
