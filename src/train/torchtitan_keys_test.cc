#include "train/torchtitan_keys.h"

#include <gtest/gtest.h>

#include "config/yaml_loader.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::train {
namespace {

using config::Value;

Value Yaml(const std::string& text) {
  auto value = config::LoadYamlString(text, "exp.yaml", Environment({}));
  EXPECT_TRUE(value.ok()) << value.error().Format();
  return *value;
}

// "valid", or the error of checking `text` (an experiment's model: and torchtitan:).
std::string Check(const std::string& text) {
  Status status = CheckTorchTitanKeys(Yaml(text), TorchTitanKeys::Builtin());
  if (status.ok()) return "valid";
  EXPECT_EQ(status.error().code, ExitCode::kConfig);
  return status.error().message + " | " + status.error().hint;
}

TEST(TorchTitanKeysTest, TheTableIsThePinnedRelease) {
  const TorchTitanKeys& table = TorchTitanKeys::Builtin();
  EXPECT_EQ(table.release(), "v0.2.2");
  EXPECT_EQ(table.commit(), "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce");
  ASSERT_NE(table.TypeOf("training.local_batch_size"), nullptr);
  EXPECT_EQ(*table.TypeOf("training.local_batch_size"), "int");
  ASSERT_NE(table.TypeOf("training.dataloader.num_workers"), nullptr) << "nested tables have dotted keys";
  EXPECT_TRUE(table.IsTable("training"));
  EXPECT_TRUE(table.IsTable("training.dataloader"));
  EXPECT_FALSE(table.IsTable("training.steps"));
  EXPECT_EQ(table.TypeOf("training.compile"), nullptr) << "compile is a section of its own in this release";
}

TEST(TorchTitanKeysTest, KnownKeysWithFittingValuesPass) {
  EXPECT_EQ(Check("model: {name: llama3, flavor: 8B}\n"
                  "torchtitan:\n  toml:\n    compile: {enable: true, components: [model]}\n"
                  "    training: {dataset: c4, dataloader: {num_workers: 2}, max_norm: 1}\n"
                  "    activation_checkpoint: {mode: selective, selective_ac_option: 2}\n"
                  "    optimizer: {name: AdamW, implementation: fused}\n"
                  "    lr_scheduler: {decay_ratio: null}\n"),
            "valid");
  // A number for a str key is written as its text.
  auto toml = CheckedTorchTitanToml(Yaml("torchtitan:\n  toml:\n    activation_checkpoint: {selective_ac_option: 2}\n"), TorchTitanKeys::Builtin());
  ASSERT_TRUE(toml.ok());
  EXPECT_TRUE(toml->Find("activation_checkpoint.selective_ac_option")->IsString());
}

TEST(TorchTitanKeysTest, UnknownSectionsAndKeysGetTheNearest) {
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    trainig: {steps: 3}\n"),
            "exp.yaml:3:5: torchtitan.toml.trainig is not a TorchTitan v0.2.2 section (did you mean "
            "'torchtitan.toml.training'?) | the sections are: job, profiling, metrics, model, optimizer, lr_scheduler, "
            "training, parallelism, checkpoint, activation_checkpoint, compile, quantize, comm, memory_estimation, "
            "fault_tolerance, experimental, validation, debug");
  std::string typo = Check("torchtitan:\n  toml:\n    training: {datset: c4}\n");
  EXPECT_EQ(typo.substr(0, typo.find(" | ")),
            "exp.yaml:3:16: torchtitan.toml.training.datset is not a TorchTitan v0.2.2 setting (did you mean "
            "'torchtitan.toml.training.dataset'?)");
  EXPECT_NE(typo.find("the keys of [training] are: dataset, dataset_path, local_batch_size"), std::string::npos) << typo;
  EXPECT_NE(Check("model: {name: llama3, flavour: 8B}\n").find("model.flavour is not a TorchTitan v0.2.2 setting (did you "
                                                                "mean 'model.flavor'?)"),
            std::string::npos);
}

TEST(TorchTitanKeysTest, KeysWeWriteCannotBeOverridden) {
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    training: {local_batch_size: 16}\n"),
            "exp.yaml:3:16: torchtitan.toml.training.local_batch_size is written by primus-cli from the experiment's own "
            "keys | use parallelism.micro_batch");
  for (const auto& [toml, ours] : std::vector<std::pair<std::string, std::string>>{
           {"training: {global_batch_size: 64}", "use parallelism.global_batch"},
           {"parallelism: {tensor_parallel_degree: 4}", "use parallelism.tensor"},
           {"parallelism: {expert_parallel_degree: 4}", "use parallelism.expert"},
           {"parallelism: {data_parallel_shard_degree: 4}", "use parallelism.tensor, .pipeline and .context"},
           {"training: {steps: 4}", "use training.steps"},
           {"model: {name: llama3}", "use model.name"},
       }) {
    std::string error = Check("torchtitan:\n  toml:\n    " + toml + "\n");
    EXPECT_NE(error.find("is written by primus-cli"), std::string::npos) << toml << ": " << error;
    EXPECT_NE(error.find(ours), std::string::npos) << toml << ": " << error;
  }
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    parallelism: {data_parallel_replicate_degree: 2}\n"), "valid") << "HSDP is yours";
}

TEST(TorchTitanKeysTest, ValuesMustFitTheirType) {
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    compile: {enable: 1}\n"),
            "exp.yaml:3:23: torchtitan.toml.compile.enable: expected true or false, got an integer (1) | TorchTitan "
            "v0.2.2 declares it as bool");
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    lr_scheduler: {decay_type: cosin}\n"),
            "exp.yaml:3:32: torchtitan.toml.lr_scheduler.decay_type: 'cosin' is not one of linear, sqrt, cosine (did "
            "you mean 'cosine'?) | ");
  EXPECT_EQ(Check("torchtitan:\n  toml:\n    training: 3\n"),
            "exp.yaml:3:15: torchtitan.toml.training is a table of TorchTitan settings, not an integer (3) | write "
            "torchtitan.toml.training: {dataset: ...}; its keys: dataset, dataset_path, local_batch_size, "
            "global_batch_size, seq_len, max_norm, steps, enable_cpu_offload, dtype, mixed_precision_param, "
            "mixed_precision_reduce, gc_freq, gc_debug, dataloader.num_workers, dataloader.persistent_workers, "
            "dataloader.pin_memory, dataloader.prefetch_factor");
  EXPECT_NE(Check("torchtitan:\n  toml:\n    training: {steps_x: {a: 1}}\n").find("not a TorchTitan"), std::string::npos);
}

TEST(TorchTitanKeysTest, AModelFileIsNotAModelName) {
  EXPECT_EQ(Check("model: {name: llama3_8B.yaml}\n"),
            "exp.yaml:1:15: model.name 'llama3_8B.yaml' is a file; TorchTitan takes a model name and a flavor | write "
            "model: {name: llama3, flavor: 8B} (TorchTitan's names); a model file belongs in a Primus-format experiment "
            "(modules:), which runs through Primus");
}

// job.custom_config_module (TorchTitan's flux, llama3_ft, VLM): its JobConfig
// is read from the checkout and merged in; without the checkout its keys
// pass unchecked, named in a warning.
TEST(TorchTitanKeysTest, ACustomConfigModulesKeysAreReadOrPassedWithAWarning) {
  if (!IsExecutableFile("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 to run the reader";
  ScopedTempDir dir("torchtitan-custom");
  ASSERT_TRUE(MakeDirs(dir.path() + "/torchtitan/models/flux").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/torchtitan/models/flux/job_config.py",
                              "from dataclasses import dataclass, field\n\n"
                              "@dataclass\nclass Training:\n    img_size: int = 256\n\n"
                              "@dataclass\nclass Encoder:\n    t5_encoder: str = 'google/t5-v1_1-small'\n\n"
                              "@dataclass\nclass JobConfig:\n"
                              "    training: Training = field(default_factory=Training)\n"
                              "    encoder: Encoder = field(default_factory=Encoder)\n")
                  .ok());
  std::string text =
      "torchtitan:\n  path: " + dir.path() +
      "\n  toml:\n    job: {custom_config_module: torchtitan.models.flux.job_config}\n"
      "    training: {img_size: 512}\n    encoder: {t5_encoder: t5-small}\n";
  Value experiment = Yaml(text);
  std::string reader = std::string(PRIMUS_SOURCE_DIR) + "/python/torchtitan_config_keys.py";
  auto table = ChooseTorchTitanKeys({&experiment, Environment({}), "/usr/bin/python3", reader});
  ASSERT_TRUE(table.ok()) << table.error().Format();
  EXPECT_TRUE(table->warnings.empty());
  EXPECT_EQ(table->source, "TorchTitan v0.2.2 (compiled in) with the 2 keys of torchtitan.models.flux.job_config");
  EXPECT_TRUE(CheckTorchTitanKeys(experiment, *table->keys).ok());
  // Their types are checked like the compiled ones; TorchTitan's own keys stay.
  Value wrong = Yaml(text + "    lr_scheduler: {decay_type: cosin}\n");
  EXPECT_FALSE(CheckTorchTitanKeys(wrong, *table->keys).ok());
  Value typed = Yaml("torchtitan:\n  toml:\n    training: {img_size: big}\n");
  Status bad = CheckTorchTitanKeys(typed, *table->keys);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("torchtitan.toml.training.img_size: expected an integer"), std::string::npos)
      << bad.error().message;

  // Not found here: the compiled table's unknown keys pass, each named.
  Value elsewhere = Yaml(
      "torchtitan:\n  path: /nonexistent\n  toml:\n    job: {custom_config_module: torchtitan.models.flux.job_config}\n"
      "    training: {img_size: 512}\n    encoder: {t5_encoder: t5-small}\n");
  auto lenient = ChooseTorchTitanKeys({&elsewhere, Environment({}), "/usr/bin/python3", reader});
  ASSERT_TRUE(lenient.ok());
  EXPECT_TRUE(CheckTorchTitanKeys(elsewhere, *lenient->keys).ok());
  ASSERT_EQ(lenient->warnings.size(), 1u);
  EXPECT_EQ(lenient->warnings[0].rfind("torchtitan.toml: encoder.t5_encoder, training.img_size passed to TorchTitan "
                                       "unchecked: torchtitan.models.flux.job_config (job.custom_config_module) was "
                                       "not read here",
                                       0),
            0u)
      << lenient->warnings[0];
  // Without a custom module, unknown keys stay errors.
  Value no_module = Yaml("torchtitan:\n  toml:\n    training: {img_size: 512}\n");
  auto plain = ChooseTorchTitanKeys({&no_module, Environment({}), "/usr/bin/python3", reader});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(CheckTorchTitanKeys(no_module, *plain->keys).ok()) << "no custom module: unknown keys are errors";
  Value bad_name = Yaml("torchtitan:\n  toml:\n    job: {custom_config_module: 'a b'}\n");
  EXPECT_FALSE(ChooseTorchTitanKeys({&bad_name, Environment({}), "/usr/bin/python3", reader}).ok());
}

}  // namespace
}  // namespace primus::train
