// Test support: the variables the node agent gives every worker that
// torchrun does not (docs/agent.md, "Worker environment"; docs/torchrun.md),
// for the tests that compare the two environments key by key.
#pragma once

#include <set>
#include <string>

namespace primus::testing {

inline std::set<std::string> VariablesOnlyOurs() {
  return {"NODE_RANK", "NNODES", "PRIMUS_HEARTBEAT_FILE", "PRIMUS_METRICS_FILE", "PRIMUS_LAUNCH_TOKEN",
          "PYTHONUNBUFFERED", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
          // the stack dumper: its file and signal (its directory leads PYTHONPATH)
          "PRIMUS_STACK_FILE", "PRIMUS_STACK_SIGNAL",
          // PyTorch's NCCL flight recorder, on where the user set none of it
          "TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_NCCL_DUMP_ON_TIMEOUT", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
          "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"};
}

}  // namespace primus::testing
