// What an outer mode's --dry-run checks of the command each node will run:
// the inner command line (`direct -- train ...`, `container ... -- ...`)
// is run here with --dry-run, given the layout the nodes will have (node 0
// of N, through PRIMUS_DIRECT_* variables), so that what the nodes would
// refuse is refused now, as `slurm sbatch` already did for the experiment
// file: a bad option (exit 2), an experiment that does not load or a layout
// that does not fit (exit 3; with this host's GPUs unless the nodes' are
// known). Something missing on this host only (exit 4:
// a tool, a checkout, a file the nodes or the image may have) is a warning.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct NodeDryRun {
  std::vector<std::string> node_command;  // binary, global options, the inner mode and task
  int nnodes = 1;                         // the nodes the job will have (srun -N, the hostfile)
  std::string where;                      // "each Slurm node", "the container"
  int gpus_per_node = 0;                  // the nodes' GPUs when known (srun --gpus-per-node, --gres=gpu:N); 0: this host's
  // The command runs in an image whose environment this host does not know:
  // a refusal only the environment can lift (train's EXP=FILE) is a warning.
  bool in_image = false;
};

// Ok when the nodes' own --dry-run accepts the command (said on stdout), or
// when it stops only on something this host lacks (a warning); the nodes'
// error otherwise, with its exit code, message and hint.
Status CheckNodeCommand(const NodeDryRun& request);

// The GPUs per node srun/sbatch flags ask for (--gpus-per-node=N,
// --gres=gpu:N or gpu:TYPE:N); 0 when they name none.
int GpusPerNodeOf(const std::vector<std::string>& flags);

}  // namespace primus::runtime
