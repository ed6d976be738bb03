#include "cli/help.h"

#include "cli/build_commit.h"
#include "cli/torchrun_command.h"
#include "runtime/runtime.h"
#include "tasks/task.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

std::string Row(const std::string& name, const std::string& text) {
  std::string padded = "  " + name;
  if (padded.size() < 14) padded += std::string(14 - padded.size(), ' ');
  else padded += "  ";
  return padded + WrapText(text, 14, padded.size()) + "\n";
}

std::string ModeHelp(const runtime::Runtime& mode) {
  std::string out = "usage: " + WrapText(mode.usage(), 11, 7) + "\n\n" + mode.summary() + "\n";
  if (!mode.details().empty()) out += "\n" + mode.details();
  if (!mode.actions().empty()) {
    out += "\nactions: " + Join(mode.actions(), ", ") + " (default: " + mode.default_action() + ")\n";
  }
  out += "\n" + mode.name() + " options:\n" + FormatOptionHelp(mode.options());
  if (mode.unknown_options() == UnknownOptionPolicy::kPassThrough) {
    out += "  (other flags are passed through unchanged to " +
           std::string(mode.name() == "slurm" ? "srun/sbatch" : mode.name() == "ssh" ? "ssh" : "the container engine") + ")\n";
  }
  if (!mode.examples().empty()) {
    out += "\nExamples:\n";
    for (const std::string& example : mode.examples()) out += "  " + example + "\n";
  }
  if (!mode.inner_modes().empty()) {
    out += "\nafter '--': one of the modes " + Join(mode.inner_modes(), ", ") + ", or a task\n";
  }
  out += "\nglobal options (accepted here too):\n" + FormatOptionHelp(runtime::GlobalOptions());
  return out;
}

std::string TaskHelp(const tasks::Task& task) {
  std::string out = task.help();
  if (!task.subtasks().empty()) out += "\nsubtasks: " + Join(task.subtasks(), ", ") + "\n";
  return out;
}

}  // namespace

const std::vector<BuiltinCommand>& BuiltinCommands() {
  static const std::vector<BuiltinCommand> builtins = {
      {"config", "the effective launcher configuration, and where each value came from"},
      {"completion", "the shell's completion script (bash, zsh, fish)"},
      {"help", "help on a mode, a task or torchrun"},
      {"torchrun", "torchrun's command line, run by primus-cli's node agent"},
  };
  return builtins;
}

std::string OverviewHelp() {
  std::string out =
      "primus-cli: one entry point for large-model training, from a bare node to a running job.\n"
      "\n"
      "usage: primus-cli [global options] <mode> [mode options] -- [<mode> ... --] <task> [subtask] [args]\n"
      "       primus-cli [global options] <task> [subtask] [args]      (same as: direct -- <task> ...)\n"
      "       primus-cli [global options] config show [--origin] [--experiment FILE]\n"
      "       primus-cli completion bash|zsh|fish                  (the shell's completion script)\n"
      "       primus-cli [global options] torchrun [torchrun's flags] script [args]   (or a link: torchrun)\n"
      "       primus-cli help <mode|task|torchrun>\n"
      "\nmodes:\n";
  for (const auto& name : runtime::RuntimeRegistry::Global().Names()) {
    const auto* mode = runtime::RuntimeRegistry::Global().Find(name);
    out += Row(name, mode->summary());
  }
  out += "\ntasks:\n";
  for (const auto& name : tasks::TaskRegistry::Global().Names()) {
    const auto* task = tasks::TaskRegistry::Global().Find(name);
    out += Row(name, task->summary());
  }
  out += "\nglobal options:\n" + FormatOptionHelp(runtime::GlobalOptions());
  out +=
      "\nexamples:\n"
      "  primus-cli direct -- train pretrain --config exp.yaml\n"
      "  primus-cli direct --nproc-per-node 2 -- run python3 train.py\n"
      "  primus-cli slurm srun -N 8 -- benchmark gemm -M 4096\n"
      "  primus-cli slurm sbatch -N 64 -p prod -- container --image IMG -- train pretrain --config exp.yaml\n"
      "\nexit codes:\n"
      "  0 success; 1 the task failed (agent-run tasks: the failing worker's own code);\n"
      "  2 usage error; 3 configuration error; 4 unavailable (a tool, library, device or port);\n"
      "  6 the work finished, but a worker stuck in its teardown was stopped; 128+N killed by signal N.\n"
      "\nmore: 'primus-cli <mode> --help', 'primus-cli direct -- <task> --help', docs/ in the repository.\n";
  return out;
}

Result<std::string> TopicHelp(const std::string& topic) {
  if (const auto* mode = runtime::RuntimeRegistry::Global().Find(topic)) return ModeHelp(*mode);
  if (const auto* task = tasks::TaskRegistry::Global().Find(topic)) return TaskHelp(*task);
  if (topic == "torchrun") return TorchrunHelp();
  if (topic == "tasks") {
    std::string out =
        "usage: primus-cli [global options] <mode> [mode options] -- <task> [subtask] [args]\n"
        "       primus-cli direct --script FILE.py [direct options] -- [script args]\n"
        "\ntasks (what runs after '--'):\n";
    for (const auto& name : tasks::TaskRegistry::Global().Names()) {
      const auto* task = tasks::TaskRegistry::Global().Find(name);
      out += Row(name, task->summary());
    }
    out += "\nhelp for one task: primus-cli direct -- <task> --help\n";
    return out;
  }
  if (topic == "config") {
    return std::string(
               "usage: primus-cli [--config FILE] [--set KEY=VALUE]... config show [--origin] [--json]\n"
               "         [--experiment FILE]\n\n"
               "Prints the effective launcher configuration, merged key by key from: built-in defaults <\n"
               "/etc/primus/config.yaml < ~/.config/primus/config.yaml < ./.primus.yaml < --config FILE <\n"
               "the experiment's launch settings (--experiment FILE) < the scheduler < PRIMUS_* environment <\n"
               "command-line flags. --origin names where each value came from. --experiment FILE shows what\n"
               "`train --config FILE` launches with: its distributed.nproc_per_node, distributed.nnodes,\n"
               "fault_tolerance.max_restarts and hang watchdog, where nothing above them is set.\n\n"
               "config show options:\n") +
           FormatOptionHelp(ConfigShowOptions()) +
           "\nExamples:\n"
           "  primus-cli config show --origin\n"
           "  primus-cli --set direct.max_restarts=3 config show --json\n"
           "  primus-cli config show --origin --experiment exp.yaml\n";
  }
  if (topic == "completion") {
    return std::string(
        "usage: primus-cli completion bash|zsh|fish\n\n"
        "Prints the shell's completion script: modes, tasks, subtasks, flags and their values\n"
        "complete on TAB, read from the same tables as the command line itself.\n"
        "  bash: source <(primus-cli completion bash)         (or save it as\n"
        "        ~/.local/share/bash-completion/completions/primus-cli)\n"
        "  zsh:  primus-cli completion zsh > \"${fpath[1]}/_primus-cli\"\n"
        "  fish: primus-cli completion fish > ~/.config/fish/completions/primus-cli.fish\n"
        "Installed packages put them where each shell finds them by itself.\n"
        "\nExamples:\n"
        "  source <(primus-cli completion bash)\n"
        "  primus-cli completion fish > ~/.config/fish/completions/primus-cli.fish\n");
  }
  std::vector<std::string> topics = runtime::RuntimeRegistry::Global().Names();
  for (const auto& name : tasks::TaskRegistry::Global().Names()) topics.push_back(name);
  topics.push_back("tasks");
  topics.push_back("config");
  topics.push_back("completion");
  topics.push_back("torchrun");
  return UsageError("no help topic '" + topic + "'" + DidYouMean(topic, topics), "topics: " + Join(topics, ", "));
}

const std::vector<OptionSpec>& ConfigShowOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--origin"}, OptionSpec::Kind::kFlag, "", "", "name where each value came from (file and line, variable, flag)"},
      {{"--json"}, OptionSpec::Kind::kFlag, "", "", "JSON on standard output: {\"config\": ..., \"origins\": ...}"},
      {{"--experiment"}, OptionSpec::Kind::kValue, "FILE", "",
       "include an experiment's launch settings (what `train --config FILE` launches with)"},
  };
  return table;
}

std::string VersionText() { return std::string("primus-cli ") + PRIMUS_VERSION + " (" + BuildCommit() + ")\n"; }

}  // namespace primus::cli
