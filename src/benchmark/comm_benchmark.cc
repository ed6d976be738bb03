#include "benchmark/comm_benchmark.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace primus::benchmark {
namespace {

using Clock = std::chrono::steady_clock;

struct Buffers {
  uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
  size_t bytes = 0;  // each
};

struct Measured {
  double seconds = 0;  // this rank's wall time per iteration
  int64_t wrong = -1;  // -1: not checked
};

class SectionRunner {
 public:
  SectionRunner(CommBackend& backend, const CommRequest& request, const CommRunRequest& context, Collective op,
                Buffers buffers)
      : backend_(backend), request_(request), context_(context), op_(op), buffers_(buffers),
        element_(static_cast<size_t>(ElementSize(request.type))) {}

  // Where this section's rows stand among every section's, for progress.
  void CountRows(long done, long total) {
    rows_done_ = done;
    rows_total_ = total;
  }

  // One collective at `size` bytes, iteration `iter` (for the buffer shift).
  Status Launch(const CollectiveCounts& counts, bool in_place, size_t iter) {
    size_t total = std::max(counts.send_count, counts.recv_count) * element_;
    size_t steps = total ? std::max<size_t>(1, request_.max_bytes / total) : 1;
    size_t shift = total * (iter % steps);
    uint8_t* recv_base = buffers_.recv + shift;
    const uint8_t* send = in_place ? recv_base + counts.send_inplace_offset * element_ * static_cast<size_t>(context_.rank)
                                   : buffers_.send + shift;
    uint8_t* recv = in_place ? recv_base + counts.recv_inplace_offset * element_ * static_cast<size_t>(context_.rank) : recv_base;
    return backend_.Start(op_, send, recv, counts.param_count, request_.type, request_.root);
  }

  Status Warmup(size_t bytes) {
    CollectiveCounts counts = CountsFor(op_, bytes / element_, context_.nranks);
    for (int i = 0; i < request_.warmup; ++i) {
      if (Status status = Launch(counts, false, static_cast<size_t>(i)); !status.ok()) return status;
    }
    return backend_.Wait();
  }

  // Fills this rank's input (and clears its output) for a checked or timed run.
  Status Prepare(const VerifiableSpec& spec, bool in_place) {
    const CollectiveCounts& c = spec.counts;
    std::vector<uint8_t> input = MakeInput(spec);
    size_t total = std::max(c.send_count, c.recv_count) * element_;
    if (Status status = backend_.Zero(buffers_.recv, std::max(total, c.recv_count * element_)); !status.ok()) return status;
    uint8_t* send = in_place ? buffers_.recv + c.send_inplace_offset * element_ * static_cast<size_t>(spec.rank) : buffers_.send;
    return input.empty() ? Status::Ok() : backend_.Upload(send, input.data(), input.size());
  }

  Result<Measured> Time(size_t bytes, bool in_place, uint64_t seed) {
    CollectiveCounts counts = CountsFor(op_, bytes / element_, context_.nranks);
    VerifiableSpec spec{op_, request_.type, context_.rank, context_.nranks, request_.root, seed, counts};
    if (request_.check > 0) {
      if (Status status = Prepare(spec, in_place); !status.ok()) return status.error();
    }
    // One synchronising collective, then every rank starts the clock together.
    if (Status status = Launch(counts, in_place, 0); !status.ok()) return status.error();
    if (Status status = backend_.Wait(); !status.ok()) return status.error();
    if (auto barrier = backend_.AllGather({0.0}); !barrier.ok()) return barrier.error();

    auto start = Clock::now();
    for (int i = 0; i < request_.iters; ++i) {
      if (Status status = Launch(counts, in_place, static_cast<size_t>(i)); !status.ok()) return status.error();
    }
    if (Status status = backend_.Wait(); !status.ok()) return status.error();
    Measured measured;
    measured.seconds = std::chrono::duration<double>(Clock::now() - start).count() / request_.iters;

    bool checkable = !in_place || InPlaceChecked(op_);
    if (request_.check > 0 && checkable) {
      measured.wrong = 0;
      std::vector<uint8_t> got(counts.recv_count * element_);
      for (int c = 0; c < request_.check && measured.wrong == 0; ++c) {
        spec.seed = seed + 1000003 * static_cast<uint64_t>(c + 1);
        if (Status status = Prepare(spec, in_place); !status.ok()) return status.error();
        if (Status status = Launch(counts, in_place, 0); !status.ok()) return status.error();
        if (Status status = backend_.Wait(); !status.ok()) return status.error();
        uint8_t* recv = in_place ? buffers_.recv + counts.recv_inplace_offset * element_ * static_cast<size_t>(context_.rank)
                                 : buffers_.recv;
        if (!got.empty()) {
          if (Status status = backend_.Download(got.data(), recv, got.size()); !status.ok()) return status.error();
          if (context_.corrupt_rank == context_.rank) CorruptElement(request_.type, got.data(), 0);
        }
        std::vector<uint8_t> expected = MakeExpected(spec);
        measured.wrong = CountWrong(spec, got.data(), expected.data());
      }
    }
    return measured;
  }

  Result<CommSection> Run() {
    CommSection section;
    section.op = op_;
    if (Status status = Warmup(request_.max_bytes); !status.ok()) return status.error();
    if (Status status = Warmup(request_.min_bytes); !status.ok()) return status.error();
    std::vector<double> rank_seconds(static_cast<size_t>(context_.nranks), 0.0);
    section.wrong_by_rank.assign(static_cast<size_t>(context_.nranks), 0);
    double busbw_sum = 0;
    int busbw_count = 0;
    uint64_t row_index = 0;
    for (size_t bytes : RowSizes(request_)) {
      if (context_.progress) {
        context_.progress(rows_done_++, rows_total_, fmt::format("({}, {} bytes)", CollectiveName(op_), bytes));
      }
      CollectiveCounts counts = CountsFor(op_, bytes / element_, context_.nranks);
      CommRow row;
      row.bytes = std::max(counts.send_count, counts.recv_count) * element_;
      row.count = counts.param_count;
      row.type = std::string(DataTypeName(request_.type));
      row.redop = std::string(RedopName(op_));
      row.root = HasRoot(op_) ? request_.root : -1;
      auto out_of_place = Time(bytes, false, 99 + 2 * row_index);
      if (!out_of_place.ok()) return out_of_place.error();
      auto in_place = Time(bytes, true, 100 + 2 * row_index);
      if (!in_place.ok()) return in_place.error();
      ++row_index;

      auto gathered = backend_.AllGather({out_of_place->seconds, static_cast<double>(out_of_place->wrong),
                                          in_place->seconds, static_cast<double>(in_place->wrong)});
      if (!gathered.ok()) return gathered.error();
      CommHalf* halves[2] = {&row.out_of_place, &row.in_place};
      for (int half = 0; half < 2; ++half) {
        double seconds = 0;
        int64_t wrong = 0;
        bool checked = true;
        for (int r = 0; r < context_.nranks; ++r) {
          double rank_time = (*gathered)[static_cast<size_t>(4 * r + 2 * half)];
          double rank_wrong = (*gathered)[static_cast<size_t>(4 * r + 2 * half + 1)];
          seconds += rank_time;
          rank_seconds[static_cast<size_t>(r)] += rank_time;
          if (rank_wrong < 0) checked = false;
          else if (rank_wrong > 0) {
            wrong += static_cast<int64_t>(rank_wrong);
            section.wrong_by_rank[static_cast<size_t>(r)] += static_cast<int64_t>(rank_wrong);
            ++section.errors;  // nccl-tests counts each failing check of each rank
          }
        }
        seconds /= context_.nranks;
        Bandwidth bw = BandwidthFor(op_, counts.param_count, ElementSize(request_.type), seconds, context_.nranks);
        *halves[half] = {seconds * 1e6, bw.algbw, bw.busbw, checked ? wrong : -1};
        busbw_sum += bw.busbw;
        ++busbw_count;
      }
      if (context_.out) *context_.out << FormatRow(row) << std::flush;
      section.rows.push_back(row);
    }
    section.average_busbw = busbw_count ? busbw_sum / busbw_count : 0;

    // The slowest rank: the largest own time over every row and mode.
    if (!section.rows.empty() && context_.nranks > 1) {
      auto slowest = std::max_element(rank_seconds.begin(), rank_seconds.end());
      int rank = static_cast<int>(slowest - rank_seconds.begin());
      double mean = 0;
      for (double seconds : rank_seconds) mean += seconds;
      mean /= context_.nranks;
      double iterations = 2.0 * static_cast<double>(section.rows.size());
      section.slowest.rank = rank;
      section.slowest.mean_us = *slowest / iterations * 1e6;
      section.slowest.percent_above = mean > 0 ? 100.0 * (*slowest - mean) / mean : 0;
      for (const RankLine& line : context_.ranks) {
        if (line.rank == rank) {
          section.slowest.host = line.host;
          section.slowest.pid = line.pid;
        }
      }
    }
    return section;
  }

 private:
  CommBackend& backend_;
  const CommRequest& request_;
  long rows_done_ = 0;   // rows measured so far by earlier sections too (progress)
  long rows_total_ = 0;
  const CommRunRequest& context_;
  Collective op_;
  Buffers buffers_;
  size_t element_;
};

}  // namespace

Result<std::vector<CommSection>> RunCommBenchmark(CommBackend& backend, const CommRequest& request,
                                                  const CommRunRequest& context) {
  bool rooted = std::any_of(request.ops.begin(), request.ops.end(), HasRoot);
  if (rooted && (request.root < 0 || request.root >= context.nranks)) {
    return UsageError(fmt::format("-r/--root {} is not a rank of this job (0..{})", request.root, context.nranks - 1),
                      "give a root below the world size");
  }
  // One allocation of the largest size for send and receive (nccl-tests'
  // AllocateBuffs), shared by every collective.
  size_t bytes = std::max<size_t>(request.max_bytes, 64);
  auto send = backend.Allocate(bytes);
  if (!send.ok()) return send.error();
  auto recv = backend.Allocate(bytes);
  if (!recv.ok()) return recv.error();
  Buffers buffers{static_cast<uint8_t*>(*send), static_cast<uint8_t*>(*recv), bytes};

  std::vector<CommSection> sections;
  long rows_per_op = static_cast<long>(RowSizes(request).size());
  long rows_total = rows_per_op * static_cast<long>(request.ops.size());
  for (Collective op : request.ops) {
    if (context.out) *context.out << FormatSectionHeader(op, context.backend, request, context.ranks) << std::flush;
    SectionRunner runner(backend, request, context, op, buffers);
    runner.CountRows(static_cast<long>(sections.size()) * rows_per_op, rows_total);
    auto section = runner.Run();
    if (!section.ok()) return section.error();
    if (context.out) *context.out << FormatSectionFooter(*section) << std::flush;
    sections.push_back(std::move(*section));
  }
  if (context.progress) context.progress(rows_total, rows_total, "");
  return sections;
}

}  // namespace primus::benchmark
