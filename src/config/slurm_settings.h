// Slurm's side of the scheduler layer (scheduler_settings.h): what a process
// started by srun learns about its place in the job from SLURM_* variables.
//
// In a job step (SLURM_STEP_ID set, i.e. srun started this process):
//   direct.nnodes          SLURM_STEP_NUM_NODES, else SLURM_JOB_NUM_NODES, SLURM_NNODES
//   direct.node_rank       SLURM_NODEID (Slurm numbers the nodes of the step)
//   direct.master_addr     the first host of SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST,
//                          expanded by util/hostlist.h and never resolved
//   direct.master_port     SlurmMasterPort(SLURM_JOB_ID)
//   direct.nproc_per_node  SLURM_GPUS_ON_NODE, when above 0
// The batch script of a one-node job counts as a one-node step. The batch
// script or salloc shell of a multi-node allocation is not a step: nothing is
// derived there (the job id and restart count are still reported), and
// CheckDirectInSlurmAllocation stops `direct` from running one node's agent
// as if it were the whole job.
#pragma once

#include <cstdint>

#include "util/environment.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::config {

// 20000 + 2 * (job_id % 5000): even, 20000-29998, the same on every node of
// the job; the control port (master port + 1) never meets the next job's
// master port.
int SlurmMasterPort(int64_t job_id);

// An Error (exit code 4) when `direct` is about to run in the batch script or
// salloc shell of a multi-node Slurm allocation (SLURM_JOB_ID set, no
// SLURM_STEP_ID) with the node count not given explicitly: it would start
// this node's workers only. OK when direct.platform is neither auto nor slurm,
// or direct.nnodes was given by flag, --set or environment variable.
Status CheckDirectInSlurmAllocation(const Environment& env, const LauncherConfig& launcher);

}  // namespace primus::config
