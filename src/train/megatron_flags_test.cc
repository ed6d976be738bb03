#include "train/megatron_flags.h"

#include <gtest/gtest.h>

#include "config/yaml_loader.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Value;

// exp.yaml's tree, with origins.
Value Yaml(const std::string& text) {
  auto value = config::LoadYamlString(text, "exp.yaml", Environment({}));
  EXPECT_TRUE(value.ok()) << value.error().Format();
  return *value;
}

// The arguments for `megatron.args.<key>: <value>` as one line, or the error.
std::string Args(const std::string& key, const std::string& value) {
  Value tree = Yaml(key + ": " + value + "\n");
  auto argv = MegatronFlags::Builtin().Arguments(key, *tree.Get(key), "megatron.args." + key);
  return argv.ok() ? Join(*argv, " ") : "error: " + argv.error().message + " | " + argv.error().hint;
}

TEST(MegatronFlagsTest, TheTableIsThePinnedRelease) {
  const MegatronFlags& table = MegatronFlags::Builtin();
  EXPECT_EQ(table.release(), "core_v0.19.0");
  EXPECT_EQ(table.commit(), "5be9626709af2722333bf54797c954c09edeada3");
  EXPECT_GT(table.options().size(), 800u) << "explicit add_argument calls and the dataclass-built groups";
  EXPECT_EQ(table.DestOf("num_layers"), "num_layers");
  EXPECT_EQ(table.DestOf("no_gradient_accumulation_fusion"), "gradient_accumulation_fusion");
  EXPECT_EQ(table.DestOf("tokenizer_metadata"), "metadata_path") << "a flag whose dest differs";
  EXPECT_EQ(table.DestOf("num_layerz"), "");
}

TEST(MegatronFlagsTest, SwitchesFollowTheirAction) {
  EXPECT_EQ(Args("use_distributed_optimizer", "true"), "--use-distributed-optimizer");
  EXPECT_EQ(Args("use_distributed_optimizer", "false"), "") << "store_true: absent for false";
  EXPECT_EQ(Args("gradient_accumulation_fusion", "false"), "--no-gradient-accumulation-fusion");
  EXPECT_EQ(Args("gradient_accumulation_fusion", "true"), "") << "store_false: absent for true (Megatron's default)";
  EXPECT_EQ(Args("no_gradient_accumulation_fusion", "true"), "--no-gradient-accumulation-fusion")
      << "the flag's own name means the flag";
  EXPECT_EQ(Args("no_gradient_accumulation_fusion", "false"), "");
  EXPECT_EQ(Args("rl_partial_rollouts", "true"), "--rl-partial-rollouts");
  EXPECT_EQ(Args("rl_partial_rollouts", "false"), "--no-rl-partial-rollouts") << "BooleanOptionalAction";
  EXPECT_EQ(Args("yarn_correction_range_round_to_int", "false"), "--no-yarn-correction-range-round-to-int");
  EXPECT_EQ(Args("bias_swiglu_fusion", "false"), "--no-bias-swiglu-fusion");
  EXPECT_EQ(Args("use_flash_attn", "null"), "") << "null: the flag is absent";
  EXPECT_EQ(Args("use_flash_attn", "yes please"),
            "error: exp.yaml:1:17: megatron.args.use_flash_attn: --use-flash-attn is a switch: true or false, not a "
            "string ('yes please') | ");
}

TEST(MegatronFlagsTest, ValuesAreTypedNeverEmptyAndListsFillNargs) {
  EXPECT_EQ(Args("num_layers", "32"), "--num-layers 32");
  EXPECT_EQ(Args("num_layers", "\"32\""), "--num-layers 32");
  EXPECT_EQ(Args("attention_dropout", "0.0"), "--attention-dropout 0.0");
  EXPECT_EQ(Args("tokenizer_type", "HuggingFaceTokenizer"), "--tokenizer-type HuggingFaceTokenizer");
  EXPECT_EQ(Args("num_layers", "many"), "error: exp.yaml:1:13: megatron.args.num_layers: --num-layers takes an integer, not 'many' | ");
  EXPECT_EQ(Args("attention_dropout", "lots"),
            "error: exp.yaml:1:20: megatron.args.attention_dropout: --attention-dropout takes a number, not 'lots' | ");
  EXPECT_EQ(Args("tokenizer_model", "\"\""),
            "error: exp.yaml:1:18: megatron.args.tokenizer_model: --tokenizer-model has an empty value | give a value, "
            "or null to leave --tokenizer-model out");
  EXPECT_EQ(Args("tokenizer_model", "true"),
            "error: exp.yaml:1:18: megatron.args.tokenizer_model: --tokenizer-model takes a value, not true | write the "
            "text in quotes (\"true\") to pass it as it is");
  // nargs: several arguments from a list.
  EXPECT_EQ(Args("data_path", "[0.5, /data/a, 0.5, /data/b]"), "--data-path 0.5 /data/a 0.5 /data/b");
  EXPECT_EQ(Args("data_path", "/data/a"), "--data-path /data/a") << "one value for a list option";
  EXPECT_EQ(Args("rampup_batch_size", "[16, 8, 300000]"), "--rampup-batch-size 16 8 300000");
  EXPECT_EQ(Args("rampup_batch_size", "[16, 8]"),
            "error: exp.yaml:1:20: megatron.args.rampup_batch_size: --rampup-batch-size takes 3 values, not 2 | ");
  EXPECT_EQ(Args("num_layers", "[1, 2]"),
            "error: exp.yaml:1:13: megatron.args.num_layers: --num-layers takes one value, not a list | ");
  EXPECT_EQ(Args("data_path", "[/data/a, \"\"]"),
            "error: exp.yaml:1:22: megatron.args.data_path: --data-path has an empty value | give a value, or null to "
            "leave --data-path out");
}

TEST(MegatronFlagsTest, UnknownOwnedAndPrimusKeysAreRefusedWithWhatToWrite) {
  EXPECT_EQ(Args("num_layer", "32"),
            "error: exp.yaml:1:1: megatron.args.num_layer is not a Megatron-LM core_v0.19.0 option (did you mean "
            "'num_layers'?) | keys are the dests of megatron/training/arguments.py (num_layers for --num-layers); "
            "an option of a fork or of another release: set megatron.release, or pass it as written in "
            "megatron.verbatim_args: [--its-flag]");
  EXPECT_EQ(Args("num-layers", "32"), "error: exp.yaml:1:1: megatron.args.num-layers is written as a flag | write 'num_layers'");
  EXPECT_EQ(Args("tensor_model_parallel_size", "3"),
            "error: exp.yaml:1:1: megatron.args.tensor_model_parallel_size is set by primus-cli from parallelism.tensor | "
            "use parallelism.tensor (it is part of the layout check)");
  EXPECT_EQ(Args("persistent_save_interval", "10"),
            "error: exp.yaml:1:1: megatron.args.persistent_save_interval is set by primus-cli from checkpoint.interval | "
            "use checkpoint.interval (it is part of the layout check)")
      << "a flag alias of an owned dest";
  for (const char* key : {"global_batch_size", "micro_batch_size", "train_iters", "lr", "seq_length", "seed", "save", "load"}) {
    EXPECT_NE(Args(key, "1").find("is set by primus-cli"), std::string::npos) << key;
  }
  for (const char* key : {"stderr_sink_level", "enable_primus_turbo", "use_turbo_attention"}) {
    std::string error = Args(key, "true");
    EXPECT_NE(error.find("is a Primus setting, not a Megatron-LM option"), std::string::npos) << error;
    EXPECT_NE(error.find("Primus-format experiment (modules:), which runs through Primus"), std::string::npos) << error;
  }
}

TEST(MegatronFlagsTest, ModelAndArgsTogether) {
  Value tree = Yaml(
      "model:\n  name: llama\n  num_layers: 2\n  hidden_size: 64\n"
      "megatron:\n  args:\n    bf16_off: null\n");
  auto bad = MegatronKeyArguments(tree, MegatronFlags::Builtin());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kConfig);
  EXPECT_NE(bad.error().message.find("exp.yaml:7:5: megatron.args.bf16_off is not a Megatron-LM"), std::string::npos)
      << bad.error().message;

  Value good = Yaml(
      "model:\n  name: llama\n  num_layers: 2\n  gradient_accumulation_fusion: false\n"
      "megatron:\n  args:\n    use_distributed_optimizer: true\n    attention_dropout: null\n");
  auto argv = MegatronKeyArguments(good, MegatronFlags::Builtin());
  ASSERT_TRUE(argv.ok()) << argv.error().Format();
  EXPECT_EQ(Join(*argv, " "), "--num-layers 2 --no-gradient-accumulation-fusion --use-distributed-optimizer")
      << "model.name is ours";

  Value twice = Yaml("model:\n  num_layers: 2\nmegatron:\n  args:\n    num_layers: 4\n");
  Status status = CheckMegatronKeys(twice, MegatronFlags::Builtin());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "exp.yaml:5:5: megatron.args.num_layers sets Megatron-LM's num_layers, which model.num_layers (exp.yaml:2:3) "
            "already sets");

  Value not_a_map = Yaml("megatron:\n  args: [--num-layers, 2]\n");
  EXPECT_NE(CheckMegatronKeys(not_a_map, MegatronFlags::Builtin()).error().message.find("megatron.args: expected a map of Megatron-LM options"),
            std::string::npos);
}

TEST(MegatronFlagsTest, ATableWithoutItsHeaderOrWithBadRowsIsRefused) {
  EXPECT_FALSE(MegatronFlags::Parse("--a\ta\tvalue\t\tint\n").ok());
  EXPECT_FALSE(MegatronFlags::Parse("# Megatron-LM v1 abc\n--a\ta\tsometimes\t\tint\n").ok());
  auto table = MegatronFlags::Parse("# Megatron-LM v1 abc\n--a,--b\ta\tvalue\t+\tint\n");
  ASSERT_TRUE(table.ok()) << table.error().Format();
  EXPECT_EQ(table->release(), "v1");
  EXPECT_TRUE(table->options().front().TakesList());
  EXPECT_EQ(table->DestOf("b"), "a");
}

TEST(MegatronFlagsTest, EveryOwnedDestIsARealOption) {
  for (const char* dest : {"tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
                           "expert_model_parallel_size", "micro_batch_size", "global_batch_size", "train_iters",
                           "train_samples", "seq_length", "lr", "lr_warmup_iters", "seed", "log_interval", "bf16",
                           "fp16", "save", "save_interval", "load"}) {
    EXPECT_EQ(MegatronFlags::Builtin().DestOf(dest), dest) << "not an option of the pinned release";
    EXPECT_FALSE(OwnedMegatronKey(dest).empty()) << dest;
  }
}

}  // namespace
}  // namespace primus::train

namespace primus::train {
namespace {

TEST(MegatronFlagsTest, ArgumentsAfterTheExperimentAreMegatronsOwnSpellings) {
  const MegatronFlags& flags = MegatronFlags::Builtin();
  EXPECT_TRUE(flags.CheckPassedArguments({"--num-layers", "4", "--no-gradient-accumulation-fusion", "--lr-decay-style=cosine"}).ok());
  // Primus's spelling: named, with Megatron's.
  Status underscore = flags.CheckPassedArguments({"--num_layers", "4"});
  ASSERT_FALSE(underscore.ok());
  EXPECT_EQ(underscore.error().code, ExitCode::kUsage);
  EXPECT_NE(underscore.error().message.find("'--num_layers' is not how Megatron-LM spells it: --num-layers"),
            std::string::npos)
      << underscore.error().message;
  // What the layout check must see.
  Status owned = flags.CheckPassedArguments({"--micro_batch_size", "1"});
  ASSERT_FALSE(owned.ok());
  EXPECT_NE(owned.error().message.find("sets what primus-cli sets from parallelism.micro_batch"), std::string::npos)
      << owned.error().message;
  Status unknown = flags.CheckPassedArguments({"--num-layerz", "4"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("is not a Megatron-LM core_v0.19.0 option"), std::string::npos);
}

}  // namespace
}  // namespace primus::train
