// The output of `benchmark comm`, laid out exactly as nccl-tests prints it
// (src/common.cu and src/util.cu of NVIDIA/nccl-tests), so that the scripts
// and parsers people already run over nccl-tests logs read ours unchanged:
//
//   # Collective test starting: all_reduce_perf
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
//   #
//   # Using devices
//   #  Rank  0 Group  0 Pid  12345 on      host1 device  0 [0000:0c:00] NVIDIA H100 80GB HBM3
//   #
//   #                                                              out-of-place                       in-place
//   #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
//              8             2     float     sum      -1    10.54    0.00    0.00       0    10.31    0.00    0.00       0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 0.00123
//   #
//   # Collective test concluded: all_reduce_perf
//   #
//
// Our additions are comment lines only: the first line naming primus-cli and
// the library, and "# Slowest rank" after the average. --json prints the same
// content as one JSON document modelled on nccl-tests' -J output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmark/comm_backend.h"
#include "benchmark/comm_request.h"

namespace primus::benchmark {

// nccl-tests' getFloatStr: `value` in `width` columns, with two decimals
// when they fit, then one, then none, then exponent notation.
std::string FloatField(double value, int width);

struct CommHalf {
  double time_us = 0;
  double algbw = 0;
  double busbw = 0;
  int64_t wrong = -1;  // -1: not checked ("N/A")
};

struct CommRow {
  size_t bytes = 0;
  size_t count = 0;
  std::string type;
  std::string redop;
  int root = -1;
  CommHalf out_of_place, in_place;
};

struct RankLine {
  int rank = 0;
  int pid = 0;
  std::string host;
  RankDevice device;
};

struct SlowestRank {
  int rank = -1;
  std::string host;
  int pid = 0;
  double mean_us = 0;          // its own time per iteration, averaged over every row and mode
  double percent_above = 0;    // above the mean of all ranks
};

struct CommSection {
  Collective op = Collective::kAllReduce;
  std::vector<CommRow> rows;
  int64_t errors = 0;           // rows (and modes) with a wrong element, counted per rank
  std::vector<int64_t> wrong_by_rank;  // wrong elements each rank found over the whole section
  double average_busbw = 0;     // over every row, out-of-place and in-place
  SlowestRank slowest;
};

std::string FormatRankLine(const RankLine& line);
// From our "# primus-cli ..." line (naming `backend`) to the column headers.
std::string FormatSectionHeader(Collective op, const std::string& backend, const CommRequest& request,
                                const std::vector<RankLine>& ranks);
std::string FormatRow(const CommRow& row);
// From "# Out of bounds values" to the closing "#".
std::string FormatSectionFooter(const CommSection& section);

nlohmann::ordered_json SectionJson(const CommSection& section);
nlohmann::ordered_json CommReportJson(const std::string& backend, const CommRequest& request,
                                      const std::vector<RankLine>& ranks, const std::vector<CommSection>& sections);

}  // namespace primus::benchmark
