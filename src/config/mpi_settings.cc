// DetectMpi: one primus-cli per node started by an MPI launcher, the way
// the GPT plan and the VCCL guide start jobs:
//
//   mpirun -np 2 --map-by ppr:1:node -x PRIMUS_JOB_TOKEN primus-cli direct -- train ...
//
//   openmpi  Open MPI's mpirun (ORTE/PRRTE): OMPI_COMM_WORLD_SIZE nodes,
//            OMPI_COMM_WORLD_RANK the node rank; node 0's address is
//            MASTER_ADDR when given (mpirun -x MASTER_ADDR=...), else the
//            first TCP address of mpirun's own host (OMPI_MCA_orte_hnp_uri,
//            or PMIX_SERVER_URI* pointing off this host), which is node 0
//            when mpirun runs on the first host of its host list.
//   mpich    MPICH's Hydra (mpiexec.hydra) and Intel MPI: PMI_SIZE nodes,
//            PMI_RANK the node rank (MPI_LOCALNRANKS agents on this host);
//            Hydra names no host, so MASTER_ADDR is required.
//
// MASTER_PORT when given, else 29500 (torchrun's default). Several agents on
// one host (OMPI_COMM_WORLD_LOCAL_SIZE or MPI_LOCALNRANKS above 1) each
// start their own workers: allowed (loopback tests do it), with a warning in
// the plan; --map-by ppr:1:node (Hydra: -ppn 1) starts one per node. Inside
// a Slurm job step, Slurm's variables are read first (srun --mpi=pmi2 sets
// PMI_RANK too), so `mpich` is tried after Slurm and `openmpi` before it.
#include <algorithm>
#include <cctype>

#include "config/scheduler_settings.h"
#include "util/strings.h"

namespace primus::config {
namespace {

constexpr int kMpiDefaultMasterPort = 29500;

Error MpiError(std::string_view launcher, const std::string& message, std::string hint = "") {
  if (hint.empty()) {
    hint = "start one primus-cli per node: mpirun -np <nodes> --map-by ppr:1:node -x MASTER_ADDR=<node 0> -x "
           "PRIMUS_JOB_TOKEN primus-cli direct -- ...; or --platform none and the flags yourself";
  }
  return Error{ExitCode::kUnavailable, std::string(launcher) + ": " + message, hint};
}

Result<int64_t> Number(std::string_view launcher, std::string_view name, const std::string& text, int64_t minimum,
                       int64_t maximum) {
  std::optional<int64_t> number = ParseInt(text);
  if (!number || *number < minimum || *number > maximum) {
    return MpiError(launcher, std::string(name) + "=" + text + " is not a number from " + std::to_string(minimum) +
                                  " to " + std::to_string(maximum));
  }
  return *number;
}

// The first IPv4 host of "ID;tcp://10.0.0.1,172.17.0.1:42133;tcp6://[::1]:5"
// (an Open MPI or PMIx contact URI); "" when there is none.
std::string FirstTcpHost(std::string_view uri) {
  size_t at = uri.find("tcp://");
  if (at == std::string_view::npos) at = uri.find("tcp4://");
  if (at == std::string_view::npos) return "";
  std::string_view rest = uri.substr(uri.find("//", at) + 2);
  size_t end = rest.find_first_of(",:;");
  std::string host(rest.substr(0, end));
  bool plausible = !host.empty() && host.size() < 256 && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
  });
  return plausible ? host : "";
}

// MASTER_ADDR, MASTER_PORT (or the defaults) into `found`.
Status AddMaster(const Environment& env, std::string_view launcher, std::string fallback_host,
                 std::string fallback_variable, SchedulerSettings* found) {
  if (std::optional<std::string> addr = PresentVariable(env, "MASTER_ADDR")) {
    found->settings.push_back({"direct.master_addr", *addr, "MASTER_ADDR"});
  } else if (!fallback_host.empty()) {
    found->settings.push_back({"direct.master_addr", fallback_host, fallback_variable});
  } else {
    return MpiError(launcher, "no address of node 0: MASTER_ADDR is not set, and " + std::string(launcher) +
                                  " names no host",
                    "pass it to every rank: mpiexec -genv MASTER_ADDR <node 0's host> ... (Open MPI: -x "
                    "MASTER_ADDR=...)");
  }
  if (std::optional<std::string> port = PresentVariable(env, "MASTER_PORT")) {
    Result<int64_t> number = Number(launcher, "MASTER_PORT", *port, 1, 65535);
    if (!number.ok()) return number.error();
    found->settings.push_back({"direct.master_port", std::to_string(*number), "MASTER_PORT"});
  } else {
    found->settings.push_back({"direct.master_port", std::to_string(kMpiDefaultMasterPort), "default"});
  }
  return Status::Ok();
}

Result<SchedulerSettings> Layout(std::string_view launcher, const std::string& size_name, const std::string& size,
                                 const std::string& rank_name, const std::string& rank, SchedulerSettings found) {
  Result<int64_t> nnodes = Number(launcher, size_name, size, 1, 1 << 20);
  if (!nnodes.ok()) return nnodes.error();
  Result<int64_t> node_rank = Number(launcher, rank_name, rank, 0, *nnodes - 1);
  if (!node_rank.ok()) return node_rank.error();
  found.settings.push_back({"direct.nnodes", std::to_string(*nnodes), size_name});
  found.settings.push_back({"direct.node_rank", std::to_string(*node_rank), rank_name});
  return found;
}

}  // namespace

Result<SchedulerSettings> DetectOpenMpi(const Environment& env) {
  std::optional<std::string> size = PresentVariable(env, "OMPI_COMM_WORLD_SIZE");
  if (!size) return SchedulerSettings{};
  std::optional<std::string> rank = PresentVariable(env, "OMPI_COMM_WORLD_RANK");
  if (!rank) return MpiError("openmpi", "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not");
  SchedulerSettings found;
  found.scheduler = "openmpi";
  if (std::optional<std::string> job = PresentVariable(env, "OMPI_MCA_ess_base_jobid")) found.job_id = "mpi-" + *job;
  auto layout = Layout("openmpi", "OMPI_COMM_WORLD_SIZE", *size, "OMPI_COMM_WORLD_RANK", *rank, found);
  if (!layout.ok()) return layout;
  if (std::optional<std::string> local = PresentVariable(env, "OMPI_COMM_WORLD_LOCAL_SIZE")) {
    Result<int64_t> agents = Number("openmpi", "OMPI_COMM_WORLD_LOCAL_SIZE", *local, 1, 1 << 20);
    if (!agents.ok()) return agents.error();
    layout->agents_on_this_host = static_cast<int>(*agents);
  }
  std::string hnp = FirstTcpHost(PresentVariable(env, "OMPI_MCA_orte_hnp_uri").value_or(""));
  Status master = AddMaster(env, "openmpi", hnp, "OMPI_MCA_orte_hnp_uri", &*layout);
  if (!master.ok()) return master.error();
  return layout;
}

Result<SchedulerSettings> DetectMpich(const Environment& env) {
  std::optional<std::string> size = PresentVariable(env, "PMI_SIZE");
  std::optional<std::string> rank = PresentVariable(env, "PMI_RANK");
  // Hydra's own: a PMI rank from elsewhere (a Cray PMI, srun --mpi=pmi2) is not a Hydra launch.
  std::optional<std::string> local = PresentVariable(env, "MPI_LOCALNRANKS");
  if (!size || !rank || !local) return SchedulerSettings{};
  SchedulerSettings found;
  found.scheduler = "mpich";
  auto layout = Layout("mpich", "PMI_SIZE", *size, "PMI_RANK", *rank, found);
  if (!layout.ok()) return layout;
  Result<int64_t> agents = Number("mpich", "MPI_LOCALNRANKS", *local, 1, 1 << 20);
  if (!agents.ok()) return agents.error();
  layout->agents_on_this_host = static_cast<int>(*agents);
  Status master = AddMaster(env, "mpich", "", "", &*layout);
  if (!master.ok()) return master.error();
  return layout;
}

}  // namespace primus::config
