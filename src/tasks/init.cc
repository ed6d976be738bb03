// The `init` task: an experiment from a built-in template
// (train/model_templates.h), sized for the GPUs found here or given.
//   init MODEL [--backend B] [--gpus N] [--nodes N] [--output FILE|-] [--force] [--json]
//   init --list [--json]
// Exit codes: 0 written, 2 bad arguments, an unknown model or backend, or a
// file that exists (without --force), 4 the file cannot be written.
#include <sys/stat.h>

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hooks/hook_runner.h"
#include "platform/host_detect.h"
#include "platform/roots.h"
#include "platform/visible_devices.h"
#include "tasks/task.h"
#include "train/model_templates.h"
#include "util/environment.h"
#include "util/files.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& InitOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--backend", "-b"}, K::kValue, "megatron|torchtitan|torch", "", "megatron, torchtitan or torch (the example trainer at small scale); "
                                                 "default: the model's first, torch without GPUs"},
      {{"--gpus"}, K::kValue, "N", "", "GPUs per node it will run on (default: those visible here; 0: CPU workers)"},
      {{"--nodes", "-N"}, K::kValue, "N", "", "nodes it will run on (default 1)"},
      {{"--output", "-o"}, K::kValue, "FILE", "", "where to write it (default ./<model>-<backend>.yaml; -: standard output)"},
      {{"--force"}, K::kFlag, "", "", "replace an existing file"},
      {{"--list"}, K::kFlag, "", "", "list the templates and their backends"},
      {{"--json"}, K::kFlag, "", "", "JSON on standard output: what was written (or the list)"},
  };
  return table;
}

struct InitArgs {
  std::string model;
  std::string backend;
  std::optional<int> gpus;
  int nodes = 1;
  std::string output;
  bool force = false, list = false, json = false;
};

Result<int> CountArgument(const ParsedOption& option, int min, int max) {
  auto number = ParseInt(option.value);
  if (!number || *number < min || *number > max) {
    return UsageError(fmt::format("init {}: '{}' is not a number from {} to {}", option.written, option.value, min, max));
  }
  return static_cast<int>(*number);
}

Result<InitArgs> ParseInitArgs(const std::vector<std::string>& args) {
  InitArgs parsed;
  std::vector<std::string> models;
  size_t at = 0;
  while (at < args.size()) {
    auto options = ParseOptions(args, at, {&InitOptions()}, UnknownOptionPolicy::kReject, "init");
    if (!options.ok()) return options.error();
    for (const ParsedOption& option : options->options) {
      const std::string& name = option.spec->names.front();
      if (name == "--backend") parsed.backend = option.value;
      if (name == "--output") parsed.output = option.value;
      if (name == "--force") parsed.force = true;
      if (name == "--list") parsed.list = true;
      if (name == "--json") parsed.json = true;
      if (name == "--gpus" || name == "--nodes") {
        auto count = CountArgument(option, name == "--gpus" ? 0 : 1, name == "--gpus" ? 64 : 100000);
        if (!count.ok()) return count.error();
        if (name == "--gpus") parsed.gpus = *count;
        if (name == "--nodes") parsed.nodes = *count;
      }
    }
    at = options->next;
    if (at < args.size()) models.push_back(args[at++]);
  }
  if (models.size() > 1) return UsageError("init takes one MODEL, not " + ShellJoin(models), "primus-cli init llama3-8b");
  if (models.empty() && !parsed.list) {
    std::vector<std::string> names;
    for (const train::ModelTemplate& model : train::ModelTemplates()) names.push_back(model.name);
    return UsageError("init needs a MODEL: " + Join(names, ", "), "primus-cli init llama3-8b --gpus 8");
  }
  if (!models.empty()) parsed.model = models.front();
  return parsed;
}

int PrintList(bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const train::ModelTemplate& model : train::ModelTemplates()) {
      list.push_back({{"model", model.name}, {"title", model.title}, {"backends", model.backends}});
    }
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<18} {:<18} {}\n", "MODEL", "", "BACKENDS (the first is the default on GPUs)");
  for (const train::ModelTemplate& model : train::ModelTemplates()) {
    std::cout << fmt::format("{:<18} {:<18} {}\n", model.name, model.title, Join(model.backends, ", "));
  }
  return 0;
}

// The example trainer's train.py as installed beside the binary, or in the tree.
std::string ExampleTrainer() {
  std::string directory = hooks::ExampleTrainerDirectory();
  return directory.empty() ? "examples/gpt/train.py" : directory + "/train.py";
}

class InitTask : public Task {
 public:
  std::string name() const override { return "init"; }
  std::string summary() const override { return "write an experiment from a built-in template, sized for your GPUs"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&InitOptions()}; }
  bool positional_paths() const override { return false; }  // MODEL is one of the templates
  std::vector<std::string> positional_words(const std::string&) const override {
    std::vector<std::string> names;
    for (const train::ModelTemplate& model : train::ModelTemplates()) names.push_back(model.name);
    return names;
  }
  std::string help() const override {
    std::string models;
    for (const train::ModelTemplate& model : train::ModelTemplates()) {
      models += fmt::format("  {:<18} {:<18} {}\n", model.name, model.title, Join(model.backends, ", "));
    }
    return "usage: primus-cli init MODEL [--backend B] [--gpus N] [--nodes N] [--output FILE] [--force]\n"
           "       primus-cli init --list [--json]\n"
           "\n"
           "Writes an experiment for a common model, sized for --gpus per node (default: the GPUs visible\n"
           "here) and --nodes: the layout (tensor, expert and data parallel sizes) and the global batch\n"
           "follow the rules the launcher checks, so the file passes --dry-run at that size. Without GPUs\n"
           "it writes the example trainer on CPU workers. Memory is not modelled: a starting point.\n"
           "\n"
           "templates (MODEL, title, backends):\n" +
           models + "\n" + FormatOptionHelp(InitOptions()) +
           "\nExamples:\n"
           "  primus-cli init llama3-8b --gpus 8 --nodes 2\n"
           "  primus-cli --dry-run direct -- train pretrain --config llama3-8b-megatron.yaml\n"
           "  primus-cli init deepseek-v2-lite --backend torchtitan --gpus 8 -o dsv2.yaml\n"
           "  primus-cli init gpt2-124m --gpus 0          # the example trainer on this CPU\n"
           "\nExit codes: 0 written, 2 bad arguments, an unknown model or backend, or the file exists\n"
           "(--force replaces it), 4 the file cannot be written.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseInitArgs(context.args);
    if (!args.ok()) return args.error();
    if (args->list) return PrintList(args->json);
    train::TemplateRequest request{args->model, args->backend, 0, args->nodes, ExampleTrainer()};
    std::string gpus_from = "given";
    if (args->gpus) {
      request.gpus_per_node = *args->gpus;
    } else {
      platform::HostInfo host = platform::DetectHost(platform::Roots::FromEnvironment());
      request.gpus_per_node = platform::CountVisibleGpus(host, ProcessEnvironment());
      gpus_from = request.gpus_per_node > 0 ? "visible here" : "none visible here";
    }
    auto rendered = train::RenderTemplate(request);
    if (!rendered.ok()) return rendered.error();
    std::string path = args->output.empty() ? rendered->exp_name + ".yaml" : args->output;
    if (path != "-") {
      struct stat existing;
      if (lstat(path.c_str(), &existing) == 0 && !args->force) {
        return UsageError("init: " + path + " exists", "--force replaces it; --output FILE writes elsewhere");
      }
      if (context.dry_run && !args->json) {
        std::cout << "would write " << path << ": " << rendered->summary << "\n";
        return 0;
      }
      if (!context.dry_run) {
        if (Status written = WriteFileAtomic(path, rendered->yaml, kUserOutputMode); !written.ok()) {
          return written.error();
        }
      }
    }
    if (args->json) {
      const train::TemplateLayout& l = rendered->layout;
      nlohmann::ordered_json out = {
          {"file", path},          {"written", path != "-" && !context.dry_run},
          {"model", rendered->model},   {"backend", rendered->backend},
          {"gpus_per_node", request.gpus_per_node},                {"gpus_from", gpus_from},
          {"nodes", request.nodes}, {"nproc_per_node", l.nproc_per_node},
          {"layout", {{"tensor", l.tensor}, {"pipeline", l.pipeline}, {"expert", l.expert},
                      {"data_parallel", l.data_parallel}, {"micro_batch", l.micro_batch},
                      {"global_batch", l.global_batch}, {"seq_len", l.seq_len}}}};
      if (path == "-") out["yaml"] = rendered->yaml;
      std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
      return 0;
    }
    if (path == "-") {
      std::cout << rendered->yaml;
      return 0;
    }
    std::string file = ShellQuote(path);
    std::cout << "wrote " << path << ": " << rendered->summary << " (GPUs " << gpus_from << ")\n"
              << "next:\n"
              << "  primus-cli --dry-run direct -- train pretrain --config " << file << "   # the plan; starts nothing\n";
    if (request.nodes > 1) {
      std::cout << "  primus-cli slurm sbatch -N " << request.nodes << " -- train pretrain --config " << file << "\n";
    } else {
      std::cout << "  primus-cli direct -- train pretrain --config " << file << "\n";
    }
    return 0;
  }
};

TaskRegistration<InitTask> init_registration;

}  // namespace
}  // namespace primus::tasks
