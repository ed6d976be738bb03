// Training progress read from what a framework prints, with no change to its
// code: one worker's output lines in, TrainingMetrics out (the same record a
// PRIMUS_METRICS_FILE line gives). Each format is taken from the framework's
// own format strings at the pinned releases (../shared/upstream/):
//
//   megatron     Megatron-LM training_log (core_v0.12 to core_v0.19), printed
//                by the last rank: " [date] iteration 10/ 100 | consumed
//                samples: ... | elapsed time per iteration (ms): ... |
//                throughput per GPU (TFLOP/s/GPU): ... | learning rate: ... |
//                global batch size: ... | lm loss: ... | loss scale: ... |
//                grad norm: ... | number of skipped iterations: ... | number of
//                nan iterations: ... |", and at --timing-log-level 1 or 2
//                the timer block after it (megatron_timers.h, TakeBlockRecord)
//   torchtitan   TorchTitan v0.2.2 (components/metrics.py), with its colours:
//                "step: 10  loss:  7.5000  grad_norm:  1.2345  memory: ...GiB(..%)
//                tps: 1,234  tflops: 12.34  mfu: 5.67%"
//   hf           Hugging Face Trainer / accelerate log dicts:
//                "{'loss': 2.1, 'grad_norm': 1.3, 'learning_rate': 5e-05, 'epoch': 0.5}"
//   nanogpt      "iter 100: loss 4.1234, time 123.45ms, mfu 12.34%"
//   primus       our example trainer: "step 10/200 loss 4.5191 lr 3.00e-04 tok/s 33367 world 2"
//
// Primus's own logger prefixes (and any "[titan] ... - INFO - " or
// timestamp prefix) are skipped: the keys are found wherever they start.
// Primus's rewrite of Megatron's line (its training_log patch: "elapsed time
// per iteration (ms): inst/avg", "compute per GPU (TFLOP/s/GPU): x (avg y)",
// "tokens/s/GPU inst/harmonic mean: x/y", "hip mem usage/...: xGB/...") is
// read too, the instant figures first.
// Terminal colour codes are removed first. `auto` tries every format on each
// line until one matches, then keeps to it. `regex` takes a user's RE2
// pattern whose named groups are the record's fields (step, total_steps,
// loss, lr, tokens_per_s, step_time_s, step_time_ms, tflops_per_gpu,
// grad_norm). Lines are untrusted: every number is checked (finite, in
// range), a line longer than kMaxLineBytes is not read, and no line can make
// the reader allocate more than it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/megatron_timers.h"
#include "telemetry/node_sample.h"
#include "util/error.h"

namespace re2 {
class RE2;
}

namespace primus::telemetry {

enum class ProgressFormat { kNone, kAuto, kPrimus, kMegatron, kTorchTitan, kHuggingFace, kNanoGpt, kRegex };

// "none", "auto", "primus", "megatron", "torchtitan", "hf", "nanogpt", "regex".
std::string_view ProgressFormatName(ProgressFormat format);
// A usage error names the value and lists the formats.
Result<ProgressFormat> ParseProgressFormat(std::string_view name);
// Every name ParseProgressFormat takes, for help and errors.
const std::vector<std::string>& ProgressFormatNames();

// The escape sequences of a terminal (colours, cursor moves) removed.
std::string StripTerminalCodes(std::string_view line);

class ProgressLineReader {
 public:
  static constexpr size_t kMaxLineBytes = 16 << 10;

  // `regex` is used with ProgressFormat::kRegex only; a pattern that does not
  // compile, or names no field, is a configuration error naming it.
  static Result<ProgressLineReader> Create(ProgressFormat format, const std::string& regex = "");
  ProgressLineReader(ProgressLineReader&&) noexcept;
  ProgressLineReader& operator=(ProgressLineReader&&) noexcept;
  ~ProgressLineReader();

  // The record this line reports, or nullopt when it is not a progress line.
  // Cheap for the lines that are not: one search for a key word first.
  std::optional<TrainingMetrics> Read(std::string_view line);

  // Megatron-LM's timer block (telemetry/megatron_timers.h) follows its
  // training log line over several lines: once a line ends it, or the output
  // read so far is exhausted (`output_paused`: the block came in one write
  // and nothing follows yet), this is the iteration's record again with the
  // block's parts in time_parts. Take it after each Read, before the record
  // Read returned (it belongs to the step before). nullopt otherwise.
  std::optional<TrainingMetrics> TakeBlockRecord(bool output_paused = false);

  // The format in use: under kAuto, the one the first matching line showed
  // (kAuto until then).
  ProgressFormat format() const { return matched_; }

 private:
  ProgressLineReader() = default;
  std::optional<TrainingMetrics> ReadAs(ProgressFormat format, std::string_view line);
  void EndTimerBlock();

  ProgressFormat format_ = ProgressFormat::kAuto;
  ProgressFormat matched_ = ProgressFormat::kAuto;
  std::unique_ptr<re2::RE2> regex_;
  long records_ = 0;  // hf: its log lines carry no step; they are counted
  MegatronTimerBlock timers_;
  std::optional<TrainingMetrics> last_megatron_;  // the iteration a timer block belongs to
  std::optional<TrainingMetrics> block_record_;   // a block a later line ended
};

}  // namespace primus::telemetry
