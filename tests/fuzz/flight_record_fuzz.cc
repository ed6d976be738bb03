// Fuzz target: a NCCL flight recorder dump of any content, read as `analyze
// hang` and the agent read one (analyze/flight_record.h over the restricted
// pickle reader, util/pickle_reader.h, or JSON), then judged with three
// copies of itself as other ranks (analyze/hang_culprit.h).
//
// Input: the dump file's bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analyze/flight_record.h"
#include "analyze/hang_culprit.h"
#include "util/pickle_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)primus::ReadPickle(input, "fuzz");
  auto record = primus::analyze::ReadFlightRecord(input, "fuzz");
  if (!record.ok()) return 0;
  std::vector<primus::analyze::RankStacks> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    primus::analyze::RankStacks stacks;
    stacks.rank = rank;
    stacks.flight = *record;
    if (rank == 2 && !stacks.flight->groups.empty()) stacks.flight->groups[0].last_enqueued -= 1;
    ranks.push_back(std::move(stacks));
  }
  primus::analyze::HangVerdict verdict = primus::analyze::JudgeHang(ranks);
  for (int culprit : verdict.culprits) {
    if (culprit < 0 || culprit > 3) std::abort();
  }
  (void)primus::analyze::FormatVerdict(verdict);
  return 0;
}
