// The lines below were produced by running each framework's own format
// code (../shared/upstream/: Megatron-LM core_v0.19.0 training.py
// training_log, TorchTitan v0.2.2 components/metrics.py and tools/utils.py's
// Color, its logging.py formatter) in python3 with the values in the tests.
#include "telemetry/progress_line.h"

#include <gtest/gtest.h>

namespace primus::telemetry {
namespace {

const char kMegatron[] =
    " [2026-11-27 12:00:00.123456] iteration       10/     100 | consumed samples:          640 | elapsed time per "
    "iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 412.3 | learning rate: 3.000000E-04 | global batch "
    "size:    64 | lm loss: 7.500000E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |";
const char kTorchTitan[] =
    "[titan] 2026-11-27 12:00:00,123 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  7.50000  "
    "\x1b[38;2;180;60;0mgrad_norm:  1.2345  \x1b[38;2;54;234;195mmemory: 10.50GiB(13.12%)  \x1b[34mtps: 12,346  "
    "\x1b[36mtflops: 1,234.57  \x1b[35mmfu: 45.68%\x1b[39m";
const char kTorchTitanValidation[] =
    "[titan] 2026-11-27 12:00:00,123 - root - INFO - \x1b[33mvalidate step: 10  \x1b[32mloss:  7.2500  "
    "\x1b[38;2;54;234;195mmemory: 10.50GiB(13.12%)  \x1b[34mtps: 12,346\x1b[39m";
// Primus fd1eeabb's training_log patch rewriting Megatron's line, through its
// loguru file sink (made by running Primus's own patch and logger code).
const char kPrimusMegatron[] =
    "[20260115 10:20:31][root/amd][pre_trainer][ip-10.0.0.1][rank-7/8][DEBUG]    [-----------utils.py:429] : "
    "[2026-01-15 10:20:30.123456] iteration        4/     100 | consumed samples:          512 | elapsed time per "
    "iteration (ms): 1187.6/1211.1 | compute per GPU (TFLOP/s/GPU): 128.3 (avg 125.9)  | tokens/s/GPU inst/harmonic "
    "mean: 55183.6/54112.8 | learning rate: 1.200000E-05 | global batch size:   128 | lm loss: 9.250000E+00 | loss "
    "scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 | hip mem "
    "usage/free/total/usage_ratio: 45.50GB/146.50GB/192.00GB/23.70%  | rocm mem usage/free/total/usage_ratio: "
    "47.25GB/144.75GB/192.00GB/24.61% | rank-3 rocm max mem usage/usage_ratio: 48.00GB/25.00%";
// Primus's console line for TorchTitan: its loguru prefix, TorchTitan's colours kept.
const char kPrimusTorchTitan[] =
    "[20260115 10:20:31][rank-0/8][INFO]     \x1b[31mstep: 10  \x1b[32mloss:  7.50000  \x1b[34mtps: 12,346  "
    "\x1b[35mmfu: 39.57%\x1b[39m";
const char kNanoGpt[] = "iter 100: loss 4.1235, time 123.45ms, mfu 12.34%";
const char kHuggingFace[] = "{'loss': 2.1, 'grad_norm': 1.3, 'learning_rate': 5e-05, 'epoch': 0.5}";
const char kPrimus[] = "step 10/200 loss 4.5191 lr 3.00e-04 tok/s 33367 world 2";

ProgressLineReader Reader(ProgressFormat format, const std::string& regex = "") {
  auto reader = ProgressLineReader::Create(format, regex);
  EXPECT_TRUE(reader.ok()) << (reader.ok() ? "" : reader.error().message);
  return std::move(*reader);
}

TEST(ProgressLineTest, MegatronTrainingLogGivesEveryField) {
  auto reader = Reader(ProgressFormat::kMegatron);
  auto metrics = reader.Read(kMegatron);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->step, 10);
  EXPECT_EQ(metrics->total_steps, 100);
  EXPECT_DOUBLE_EQ(*metrics->loss, 7.5);
  EXPECT_DOUBLE_EQ(*metrics->step_time_s, 1.2345);
  EXPECT_DOUBLE_EQ(*metrics->tflops_per_gpu, 412.3);
  EXPECT_DOUBLE_EQ(*metrics->learning_rate, 3e-4);
  EXPECT_EQ(metrics->global_batch_size, 64);
  EXPECT_NEAR(*metrics->samples_per_s, 64 / 1.2345, 1e-9);
  EXPECT_DOUBLE_EQ(*metrics->grad_norm, 1.234);
  EXPECT_DOUBLE_EQ(*metrics->loss_scale, 1.0);
  EXPECT_EQ(metrics->skipped_iterations, 0);
  EXPECT_EQ(metrics->nan_iterations, 0);
}

TEST(ProgressLineTest, MegatronsTimerBlockBecomesTheIterationsRecordWithParts) {
  auto reader = Reader(ProgressFormat::kAuto);
  ASSERT_TRUE(reader.Read(kMegatron));
  EXPECT_FALSE(reader.Read("(min, max) time across ranks (ms):"));
  EXPECT_FALSE(reader.Read("    forward-backward ...............................: (1100.00, 1200.00)"));
  EXPECT_FALSE(reader.TakeBlockRecord()) << "nothing has ended the block yet";
  auto block = reader.TakeBlockRecord(/*output_paused=*/true);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->step, 10);
  EXPECT_DOUBLE_EQ(*block->loss, 7.5);
  ASSERT_EQ(block->time_parts.size(), 1u);
  EXPECT_DOUBLE_EQ(block->time_parts[0].seconds, 1.2);
  EXPECT_FALSE(reader.TakeBlockRecord(true)) << "taken once";
  // Other formats never read a timer block.
  auto titan = Reader(ProgressFormat::kTorchTitan);
  EXPECT_FALSE(titan.Read("(min, max) time across ranks (ms):"));
  EXPECT_FALSE(titan.TakeBlockRecord(true));
}

TEST(ProgressLineTest, PrimusRewrittenMegatronAndTorchTitanLinesAreRead) {
  auto megatron = Reader(ProgressFormat::kAuto).Read(kPrimusMegatron);
  ASSERT_TRUE(megatron);
  EXPECT_EQ(megatron->step, 4);
  EXPECT_EQ(megatron->total_steps, 100);
  EXPECT_DOUBLE_EQ(*megatron->loss, 9.25);
  EXPECT_DOUBLE_EQ(*megatron->step_time_s, 1.1876);  // the instant figure, not the average
  EXPECT_DOUBLE_EQ(*megatron->tflops_per_gpu, 128.3);
  EXPECT_DOUBLE_EQ(*megatron->tokens_per_s, 55183.6);
  EXPECT_EQ(megatron->memory_bytes, static_cast<int64_t>(45.5 * 1073741824.0));
  auto titan = Reader(ProgressFormat::kAuto).Read(kPrimusTorchTitan);
  ASSERT_TRUE(titan);
  EXPECT_EQ(titan->step, 10);
  EXPECT_DOUBLE_EQ(*titan->tokens_per_s, 12346);
}

TEST(ProgressLineTest, MegatronValidationAndOtherLossesAreNotTheTrainingLoss) {
  auto reader = Reader(ProgressFormat::kMegatron);
  EXPECT_FALSE(reader.Read(" validation loss at iteration 10 on validation set | lm loss value: 7.1E+00 | "));
  // Without "lm loss" (an MTP-only or renamed loss), the first "... loss" is it.
  auto other = reader.Read(" iteration        3/      10 | mtp_1 loss: 2.500000E+00 | loss scale: 1.0 |");
  ASSERT_TRUE(other);
  EXPECT_DOUBLE_EQ(*other->loss, 2.5);
  EXPECT_FALSE(other->loss_scale == std::nullopt);
}

TEST(ProgressLineTest, TorchTitanStepsAreReadThroughTheirColoursAndValidationIsNot) {
  auto reader = Reader(ProgressFormat::kTorchTitan);
  auto metrics = reader.Read(kTorchTitan);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->step, 10);
  EXPECT_DOUBLE_EQ(*metrics->loss, 7.5);
  EXPECT_DOUBLE_EQ(*metrics->grad_norm, 1.2345);
  EXPECT_DOUBLE_EQ(*metrics->tokens_per_s, 12346);
  EXPECT_DOUBLE_EQ(*metrics->tflops_per_gpu, 1234.57);
  EXPECT_NEAR(*metrics->mfu, 0.4568, 1e-12);
  EXPECT_EQ(metrics->memory_bytes, static_cast<int64_t>(10.5 * 1073741824.0));
  EXPECT_FALSE(reader.Read(kTorchTitanValidation));
}

TEST(ProgressLineTest, NanoGptHuggingFaceAndOurTrainer) {
  auto nano = Reader(ProgressFormat::kNanoGpt).Read(kNanoGpt);
  ASSERT_TRUE(nano);
  EXPECT_EQ(nano->step, 100);
  EXPECT_DOUBLE_EQ(*nano->loss, 4.1235);
  EXPECT_DOUBLE_EQ(*nano->step_time_s, 0.12345);
  EXPECT_NEAR(*nano->mfu, 0.1234, 1e-12);
  auto warming = Reader(ProgressFormat::kNanoGpt).Read("iter 1: loss 10.9, time 900.00ms, mfu -100.00%");
  ASSERT_TRUE(warming);
  EXPECT_FALSE(warming->mfu) << "nanoGPT's -100% before it measured is not a figure";

  auto hf = Reader(ProgressFormat::kHuggingFace);
  auto first = hf.Read(kHuggingFace);
  auto second = hf.Read(kHuggingFace);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->step, 1);  // the dict has no step: records are counted
  EXPECT_EQ(second->step, 2);
  EXPECT_DOUBLE_EQ(*first->learning_rate, 5e-5);
  EXPECT_DOUBLE_EQ(*first->epoch, 0.5);
  EXPECT_FALSE(hf.Read("{'train_runtime': 12.3, 'train_loss': 2.0}"));  // the summary has no 'loss'

  auto ours = Reader(ProgressFormat::kPrimus).Read(kPrimus);
  ASSERT_TRUE(ours);
  EXPECT_EQ(ours->step, 10);
  EXPECT_EQ(ours->total_steps, 200);
  EXPECT_DOUBLE_EQ(*ours->loss, 4.5191);
  EXPECT_DOUBLE_EQ(*ours->tokens_per_s, 33367);
}

TEST(ProgressLineTest, AutoKeepsToTheFirstFormatItRecognises) {
  auto reader = Reader(ProgressFormat::kAuto);
  EXPECT_FALSE(reader.Read("loading checkpoint, loss of precision is expected"));
  EXPECT_EQ(reader.format(), ProgressFormat::kAuto);
  ASSERT_TRUE(reader.Read(kTorchTitan));
  EXPECT_EQ(reader.format(), ProgressFormat::kTorchTitan);
  EXPECT_FALSE(reader.Read(kPrimus));  // another format's line later is not taken
  // A sentence with "step" and "loss" in someone's log does not lock the reader.
  auto sentence = Reader(ProgressFormat::kAuto);
  EXPECT_FALSE(sentence.Read("saved checkpoint at step 500, val loss 2.31"));
  EXPECT_FALSE(sentence.Read("step 500 loss 2.31"));  // our trainer always prints step N/M
  EXPECT_EQ(sentence.format(), ProgressFormat::kAuto);
  auto megatron = Reader(ProgressFormat::kAuto);
  ASSERT_TRUE(megatron.Read(std::string("[Primus:rank-7] ") + kMegatron));
  EXPECT_EQ(megatron.format(), ProgressFormat::kMegatron);
}

TEST(ProgressLineTest, UserRegexNamesTheFields) {
  auto reader = Reader(ProgressFormat::kRegex, R"(it=(?P<step>\d+) L=(?P<loss>[0-9.]+) dt=(?P<step_time_ms>\d+))");
  auto metrics = reader.Read("it=7 L=3.25 dt=250");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->step, 7);
  EXPECT_DOUBLE_EQ(*metrics->loss, 3.25);
  EXPECT_DOUBLE_EQ(*metrics->step_time_s, 0.25);
  EXPECT_FALSE(reader.Read("nothing here"));

  auto broken = ProgressLineReader::Create(ProgressFormat::kRegex, "(?P<step>\\d+");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ExitCode::kConfig);
  auto nameless = ProgressLineReader::Create(ProgressFormat::kRegex, "(\\d+)");
  ASSERT_FALSE(nameless.ok());
  EXPECT_NE(nameless.error().message.find("no named group"), std::string::npos);
}

TEST(ProgressLineTest, HostileLinesAreRefusedNotTrusted) {
  auto reader = Reader(ProgressFormat::kAuto);
  EXPECT_FALSE(reader.Read("step 1e400/2 loss nan"));
  EXPECT_FALSE(reader.Read("step -3/10 loss 1.0"));
  EXPECT_FALSE(reader.Read(" iteration 99999999999999999999/ 1 | lm loss: 1.0 |"));
  EXPECT_FALSE(reader.Read(std::string(ProgressLineReader::kMaxLineBytes + 1, 'x') + " step 1/2 loss 1.0"));
  EXPECT_FALSE(reader.Read("step: 5  loss:  inf"));
  // A memory figure no int64 holds is left out, never cast.
  auto huge = Reader(ProgressFormat::kTorchTitan).Read("step: 1  loss: 1.0  memory: 9e9GiB(1%)  tps: 1");
  ASSERT_TRUE(huge);
  EXPECT_FALSE(huge->memory_bytes);
  EXPECT_EQ(reader.format(), ProgressFormat::kAuto);
}

TEST(ProgressLineTest, FormatNamesRoundTripAndUnknownOnesAreNamed) {
  for (const std::string& name : ProgressFormatNames()) {
    auto format = ParseProgressFormat(name);
    ASSERT_TRUE(format.ok()) << name;
    EXPECT_EQ(ProgressFormatName(*format), name);
  }
  auto wrong = ParseProgressFormat("megatrom");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("'megatrom'"), std::string::npos);
  EXPECT_NE(wrong.error().hint.find("megatron"), std::string::npos);
}

TEST(ProgressLineTest, TerminalCodesAreRemoved) {
  EXPECT_EQ(StripTerminalCodes("\x1b[31mred\x1b[39m \x1b[38;2;1;2;3mrgb\x1b[0m \x1b" "7x"), "red rgb x");
}

}  // namespace
}  // namespace primus::telemetry
