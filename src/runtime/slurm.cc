// `slurm`: start one node agent per node through srun, or write and submit
// a batch script whose body runs srun (so every node starts). srun/sbatch
// flags this table does not know pass through unchanged, in order.
#include "runtime/runtime.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

class SlurmRuntime : public Runtime {
 public:
  std::string name() const override { return "slurm"; }
  std::string summary() const override { return "run on a Slurm cluster (srun now, or sbatch a job)"; }
  std::string usage() const override {
    return "primus-cli [global options] slurm [srun|sbatch] [slurm flags] -- [container ... --|direct ... --] <task> [args]";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--nodes", "-N"}, K::kValue, "N", "slurm.nodes", "number of nodes"},
        {{"--partition", "-p"}, K::kValue, "NAME", "slurm.partition", "partition"},
        {{"--account", "-A"}, K::kValue, "NAME", "slurm.account", "account to charge"},
        {{"--time", "-t"}, K::kValue, "TIME", "slurm.time", "time limit"},
        {{"--qos"}, K::kValue, "QOS", "slurm.qos", "quality of service"},
        {{"--reservation"}, K::kValue, "NAME", "slurm.reservation", "reservation"},
        {{"--gpus-per-node"}, K::kValue, "N", "slurm.gpus_per_node", "GPUs per node"},
        {{"--wait"}, K::kFlag, "", "slurm.wait", "sbatch: follow the job and return its exit code"},
        {{"--requeue"}, K::kFlag, "", "slurm.requeue", "requeue on failure or preemption"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"container", "direct"}; }
  std::vector<std::string> actions() const override { return {"srun", "sbatch"}; }
  std::string default_action() const override { return "srun"; }
  UnknownOptionPolicy unknown_options() const override { return UnknownOptionPolicy::kPassThrough; }
  bool available() const override { return false; }
  Result<int> Execute(const RuntimeContext& context) override {
    return Error{ExitCode::kNotAvailable, "mode 'slurm' is not available yet in this build",
                 "inside an allocation, run 'srun --ntasks-per-node=1 primus-cli direct --nnodes ... -- <task>'; "
                 "the Slurm runtime is issue #6"};
  }
};

RuntimeRegistration<SlurmRuntime> registration;

}  // namespace
}  // namespace primus::runtime
