#include "benchmark/collective.h"

#include "util/strings.h"

namespace primus::benchmark {

const std::vector<Collective>& AllCollectives() {
  static const std::vector<Collective> all = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                                              Collective::kAlltoAll,  Collective::kBroadcast, Collective::kSendRecv};
  return all;
}

std::string_view CollectiveName(Collective op) {
  switch (op) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kAlltoAll: return "alltoall";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "?";
}

std::string_view ProgramName(Collective op) {
  switch (op) {
    case Collective::kAllReduce: return "all_reduce_perf";
    case Collective::kAllGather: return "all_gather_perf";
    case Collective::kReduceScatter: return "reduce_scatter_perf";
    case Collective::kAlltoAll: return "alltoall_perf";
    case Collective::kBroadcast: return "broadcast_perf";
    case Collective::kSendRecv: return "sendrecv_perf";
  }
  return "?";
}

std::optional<Collective> ParseCollective(std::string_view text) {
  std::string name = ReplaceAll(ReplaceAll(ToLower(text), "_", ""), "-", "");
  if (name.ends_with("perf")) name.resize(name.size() - 4);
  for (Collective op : AllCollectives()) {
    if (name == CollectiveName(op)) return op;
  }
  if (name == "a2a") return Collective::kAlltoAll;
  if (name == "bcast") return Collective::kBroadcast;
  return std::nullopt;
}

bool Reduces(Collective op) {
  return op == Collective::kAllReduce || op == Collective::kReduceScatter;
}

bool InPlaceChecked(Collective op) { return op != Collective::kAlltoAll && op != Collective::kSendRecv; }

std::string_view RedopName(Collective op) {
  return op == Collective::kAllReduce || op == Collective::kReduceScatter || op == Collective::kSendRecv ? "sum" : "none";
}

bool HasRoot(Collective op) { return op == Collective::kBroadcast; }

CollectiveCounts CountsFor(Collective op, size_t count, int nranks) {
  size_t n = static_cast<size_t>(nranks);
  CollectiveCounts c;
  switch (op) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kSendRecv:
      c.send_count = c.recv_count = c.param_count = count;
      break;
    case Collective::kAllGather:
      c.send_count = count / n;
      c.recv_count = (count / n) * n;
      c.param_count = count / n;
      c.send_inplace_offset = count / n;
      break;
    case Collective::kReduceScatter:
      c.send_count = (count / n) * n;
      c.recv_count = count / n;
      c.param_count = count / n;
      c.recv_inplace_offset = count / n;
      break;
    case Collective::kAlltoAll:
      c.send_count = c.recv_count = (count / n) * n;
      c.param_count = count / n;
      break;
  }
  return c;
}

double BusFactor(Collective op, int nranks) {
  double n = nranks;
  switch (op) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAlltoAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kSendRecv: return 1;
  }
  return 1;
}

Bandwidth BandwidthFor(Collective op, size_t param_count, int element_size, double seconds, int nranks) {
  double bytes = static_cast<double>(param_count) * element_size;
  if (op == Collective::kAllGather || op == Collective::kReduceScatter || op == Collective::kAlltoAll) bytes *= nranks;
  Bandwidth bw;
  if (seconds <= 0) return bw;
  bw.algbw = bytes / 1e9 / seconds;
  bw.busbw = bw.algbw * BusFactor(op, nranks);
  return bw;
}

}  // namespace primus::benchmark
