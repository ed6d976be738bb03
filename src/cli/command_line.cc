#include "cli/command_line.h"

#include <algorithm>
#include <functional>

#include "agent/launch_plan.h"
#include "tasks/task.h"
#include "train/primus_install.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

using runtime::Runtime;
using runtime::RuntimeRegistry;
using tasks::TaskRegistry;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Global options inside a pass-through mode: long names only, because short
// ones collide with engine flags (`docker run -h` is --hostname).
const std::vector<OptionSpec>& LongGlobalOptions() {
  static const std::vector<OptionSpec> table = [] {
    std::vector<OptionSpec> out;
    for (OptionSpec spec : runtime::GlobalOptions()) {
      std::erase_if(spec.names, [](const std::string& n) { return !n.starts_with("--"); });
      out.push_back(spec);
    }
    return out;
  }();
  return table;
}

bool IsGlobalSpec(const OptionSpec* spec) {
  for (const auto* table : {&runtime::GlobalOptions(), &LongGlobalOptions()}) {
    if (spec >= table->data() && spec < table->data() + table->size()) return true;
  }
  return false;
}

// The option a written token names ("--log_file=x" -> --log-file), or null
// for a value or an unknown flag.
const OptionSpec* WrittenOptionSpec(const std::string& token, const std::vector<const std::vector<OptionSpec>*>& tables) {
  if (!token.starts_with("-") || token == "-" || token == "--") return nullptr;
  std::string name = token.substr(0, token.find('='));
  if (name.starts_with("--")) std::replace(name.begin() + 2, name.end(), '_', '-');
  for (const auto* table : tables) {
    for (const OptionSpec& spec : *table) {
      if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
    }
  }
  return nullptr;
}

// Records a global option; returns true when it asks for help.
void ApplyGlobal(const ParsedOption& option, GlobalSettings* globals) {
  const std::string& name = option.spec->names.front();
  if (name == "--config") globals->config_file = option.value;
  else if (name == "--set") globals->set_assignments.push_back(option.value);
  else if (name == "--dry-run") globals->dry_run = option.value == "true";
  else if (name == "--log-file") globals->log_file = option.value;
  else if (name == "--silent") globals->silent = option.value == "true";
  else if (name == "--help") globals->help = true;
  else if (name == "--version") globals->version = true;
  else globals->config_flags.push_back(option);
}

std::vector<std::string> ModesAndTasks() {
  std::vector<std::string> names = RuntimeRegistry::Global().Names();
  for (const auto& task : TaskRegistry::Global().Names()) names.push_back(task);
  return names;
}

std::string TaskList() { return Join(TaskRegistry::Global().Names(), ", "); }

// A subcommand of Primus's own CLI that we have no task for: the `primus`
// task runs it through the Primus installation (tasks/primus.cc), which is
// looked for where the task runs (inside the container, on the nodes).
bool IsPrimusSubcommand(const std::string& word) {
  return Contains(train::PrimusOnlySubcommands(), word) && !TaskRegistry::Global().Find(word);
}

Error UnknownTask(const std::string& word, const std::string& where) {
  if (word == "torchrun") {
    return UsageError("torchrun is not a task: its command line stands on its own" + where,
                      "write: primus-cli [global options] torchrun [torchrun's flags] script [args] (docs/torchrun.md)");
  }
  return UsageError("unknown task '" + word + "'" + where + DidYouMean(word, TaskRegistry::Global().Names()),
                    "tasks: " + TaskList() + " (primus-cli --help lists them)");
}

// The inner mode an option written right after `MODE ... --` belongs to:
// the one of MODE's inner modes whose table has it; a global option
// (--log_file, --silent, --dry-run) goes to direct; an option no table knows
// to an inner mode that hands unknown options on (container: the engine).
Result<std::string> InnerModeOf(const Runtime& mode, const std::string& option) {
  std::string pass_through;
  for (const std::string& name : mode.inner_modes()) {
    const Runtime* inner = RuntimeRegistry::Global().Find(name);
    if (inner == nullptr) continue;
    if (WrittenOptionSpec(option, {&inner->options()})) return name;
    if (inner->unknown_options() == UnknownOptionPolicy::kPassThrough && pass_through.empty()) pass_through = name;
  }
  if (WrittenOptionSpec(option, {&runtime::GlobalOptions()})) {
    return Contains(mode.inner_modes(), "direct") ? std::string("direct") : mode.inner_modes().front();
  }
  if (!pass_through.empty()) return pass_through;
  return UsageError("'" + option + "' after '" + mode.name() + " ... --' is not an option of " +
                        Join(mode.inner_modes(), " or ") + ", and no task starts with '-'",
                    "write: " + mode.name() + " [options] -- [" + Join(mode.inner_modes(), "|") +
                        " [its options] --] <task> [args]");
}

// Parses one mode starting at args[i] (the mode's name) and everything after
// it; appends to command->launch.chain.
Status ParseMode(const std::vector<std::string>& args, size_t i, CommandLine* command) {
  Runtime* mode = RuntimeRegistry::Global().Find(args[i]);
  runtime::ModeInvocation invocation;
  invocation.mode = mode->name();
  ++i;
  if (!mode->actions().empty()) {
    // Primus's `slurm [--config F] [--debug] [--dry-run] srun ...`: global
    // options before the action are read as if written after it.
    size_t j = i;
    while (j < args.size()) {
      const OptionSpec* global = WrittenOptionSpec(args[j], {&runtime::GlobalOptions()});
      if (global == nullptr) break;
      bool takes_value = global->kind != OptionSpec::Kind::kFlag && args[j].find('=') == std::string::npos;
      j += takes_value ? 2 : 1;
    }
    if (j > i && j < args.size() && Contains(mode->actions(), args[j])) {
      std::vector<std::string> reordered = args;
      std::rotate(reordered.begin() + static_cast<long>(i), reordered.begin() + static_cast<long>(j),
                  reordered.begin() + static_cast<long>(j) + 1);
      return ParseMode(reordered, i - 1, command);
    }
    if (i < args.size() && Contains(mode->actions(), args[i])) {
      invocation.action = args[i++];
    } else {
      invocation.action = mode->default_action();
    }
  }

  bool pass_through = mode->unknown_options() == UnknownOptionPolicy::kPassThrough;
  const auto& globals = pass_through ? LongGlobalOptions() : runtime::GlobalOptions();
  std::string context = "mode '" + mode->name() + "'";
  std::function<bool(const std::string&)> ends_options;
  if (mode->task_word_ends_options()) {
    ends_options = [](const std::string& word) {
      return TaskRegistry::Global().Find(word) != nullptr || IsPrimusSubcommand(word);
    };
  }
  auto parsed = ParseOptions(args, i, {&mode->options(), &globals}, mode->unknown_options(), context, ends_options);
  if (!parsed.ok()) return parsed.error();

  size_t end_of_options = parsed->stopped_at_separator ? parsed->next - 1 : parsed->next;
  // What an inner mode, another node or a pod is handed again: every token
  // but the options only this process reads, and --script, which becomes the task.
  std::string script;
  for (size_t t = i; t < end_of_options; ++t) {
    const OptionSpec* spec = WrittenOptionSpec(args[t], {&mode->options(), &globals});
    bool consumed = spec && (spec->outermost_only || (mode->name() == "direct" && spec->names.front() == "--script"));
    if (!consumed) {
      invocation.written.push_back(args[t]);
      continue;
    }
    bool attached = args[t].find('=') != std::string::npos;
    if (spec->kind != OptionSpec::Kind::kFlag && !attached) ++t;  // its value
  }
  invocation.passthrough = parsed->passthrough;
  for (const ParsedOption& option : parsed->options) {
    if (IsGlobalSpec(option.spec)) ApplyGlobal(option, &command->globals);
    else if (option.spec->names.front() == "--script" && mode->name() == "direct") script = option.value;
    else invocation.options.push_back(option);
  }
  command->invocation.chain.push_back(std::move(invocation));

  if (command->globals.help) {
    command->kind = CommandLine::Kind::kHelp;
    command->help_topic = mode->name();
    return Status::Ok();
  }

  size_t next = parsed->next;
  if (!script.empty()) {
    // Primus's `direct --script FILE -- ARGS`: FILE replaces the task, and
    // every worker runs it with ARGS (one worker with --single).
    command->invocation.task = "run";
    command->invocation.task_args = {"python3", script};
    command->invocation.task_args.insert(command->invocation.task_args.end(), args.begin() + static_cast<long>(next), args.end());
    command->invocation.notes.push_back("direct --script " + script + ": the task is `run python3 " + script +
                                    "` with the arguments after '--'");
    command->kind = CommandLine::Kind::kLaunch;
    return Status::Ok();
  }
  if (parsed->stopped_at_separator && next < args.size() && (args[next] == "--help" || args[next] == "-h")) {
    // `direct -- --help`: what can run after '--'.
    command->kind = CommandLine::Kind::kHelp;
    command->help_topic = "tasks";
    return Status::Ok();
  }
  if (next >= args.size()) {
    if (!parsed->stopped_at_separator && pass_through) {
      return UsageError("no '--' after the " + context + " options, so there is no task to run",
                        "write: primus-cli " + mode->name() + " [options] -- <task> [args]  (tasks: " + TaskList() + ")");
    }
    return UsageError("missing task after " + context,
                      "write: primus-cli " + mode->name() + " [options] -- <task> [args]  (tasks: " + TaskList() + ")");
  }

  const std::string& word = args[next];
  if (parsed->stopped_at_separator && word.size() > 1 && word[0] == '-' && !mode->inner_modes().empty()) {
    // Primus's runner: the inner mode's options right after '--', its name
    // left out (`container --image I -- --log_file F -- train`).
    auto inner = InnerModeOf(*mode, word);
    if (!inner.ok()) return inner.error();
    std::vector<std::string> spelled(args.begin(), args.begin() + static_cast<long>(next));
    spelled.push_back(*inner);
    spelled.insert(spelled.end(), args.begin() + static_cast<long>(next), args.end());
    command->invocation.notes.push_back("'" + mode->name() + " ... -- " + word + "' (Primus's runner syntax) is read as '" +
                                        mode->name() + " ... -- " + *inner + " " + word + "'");
    return ParseMode(spelled, next, command);
  }
  if (RuntimeRegistry::Global().Find(word)) {
    if (!Contains(mode->inner_modes(), word)) {
      std::string allowed = mode->inner_modes().empty() ? "none" : Join(mode->inner_modes(), ", ");
      return UsageError("mode '" + word + "' cannot run inside mode '" + mode->name() + "'",
                        "modes allowed after '" + mode->name() + " ... --': " + allowed);
    }
    if (!parsed->stopped_at_separator) {
      return UsageError("expected '--' before '" + word + "'", "write: " + mode->name() + " [options] -- " + word + " ...");
    }
    return ParseMode(args, next, command);
  }
  if (!TaskRegistry::Global().Find(word) && IsPrimusSubcommand(word) && parsed->stopped_at_separator) {
    command->invocation.task = "primus";
    command->invocation.task_args.assign(args.begin() + static_cast<long>(next), args.end());
    command->kind = CommandLine::Kind::kLaunch;
    return Status::Ok();
  }
  if (!TaskRegistry::Global().Find(word)) {
    if (!parsed->stopped_at_separator) {
      return UsageError("unexpected argument '" + word + "' for " + context + DidYouMean(word, ModesAndTasks()),
                        "mode options come before '--', the task after it: primus-cli " + mode->name() +
                            " [options] -- <task> [args]");
    }
    if (WrittenOptionSpec(word, {&mode->options()}) != nullptr) {
      return UsageError("'" + word + "' is an option of " + mode->name() + ", written after its '--', where the task goes",
                        "put it before '--': primus-cli " + mode->name() + " " + word + " -- " +
                            (next + 1 < args.size() ? args[next + 1] : std::string("<task>")) + " ...");
    }
    return UnknownTask(word, " after '" + mode->name() + " ... --'");
  }
  command->invocation.task = word;
  command->invocation.task_args.assign(args.begin() + static_cast<long>(next) + 1, args.end());
  command->kind = CommandLine::Kind::kLaunch;
  return Status::Ok();
}

// torchrun's command line (args after `torchrun`), with the global options
// already read into `command`.
Result<CommandLine> ParseTorchrun(std::vector<std::string> args, const Environment& environment,
                                  const std::string& python_beside, CommandLine command) {
  command.typed = {"torchrun"};
  command.typed.insert(command.typed.end(), args.begin(), args.end());
  auto torchrun =
      ReadTorchrunCommand(TorchrunRequest{std::move(args), environment, agent::GenerateRunId(), python_beside});
  if (!torchrun.ok()) return torchrun.error();
  if (torchrun->help) {
    command.kind = CommandLine::Kind::kHelp;
    command.help_topic = "torchrun";
    return command;
  }
  if (torchrun->version) {
    command.kind = CommandLine::Kind::kVersion;
    return command;
  }
  auto ours = ParseOptions(torchrun->our_options, 0, {&runtime::GlobalOptions()}, UnknownOptionPolicy::kReject,
                           "torchrun");
  if (!ours.ok()) return ours.error();
  for (const ParsedOption& option : ours->options) ApplyGlobal(option, &command.globals);

  runtime::ModeInvocation direct;
  direct.mode = "direct";
  command.invocation.chain = {direct};
  command.invocation.task = "run";
  command.invocation.task_args = torchrun->worker_argv;
  command.invocation.program = "torchrun";
  for (const TorchrunNote& note : torchrun->notes) {
    if (note.level == TorchrunNote::Level::kPlan) command.invocation.notes.push_back("torchrun: " + note.text);
  }
  command.translated_settings = std::move(torchrun->settings);
  command.program_defaults = std::move(torchrun->defaults);
  command.notes = std::move(torchrun->notes);
  command.kind = CommandLine::Kind::kLaunch;
  return command;
}

}  // namespace

Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args, const Environment& environment,
                                     std::string_view program, const std::string& python_beside) {
  CommandLine command;
  if (program == "torchrun") return ParseTorchrun(args, environment, python_beside, std::move(command));
  auto parsed = ParseOptions(args, 0, {&runtime::GlobalOptions()}, UnknownOptionPolicy::kReject, "primus-cli");
  if (!parsed.ok()) {
    Error error = parsed.error();
    error.hint = "global options come first: primus-cli [global options] <mode> [mode options] -- <task> ...";
    return error;
  }
  for (const ParsedOption& option : parsed->options) ApplyGlobal(option, &command.globals);

  size_t i = parsed->next;
  if (command.globals.version) {
    command.kind = CommandLine::Kind::kVersion;
    return command;
  }
  if (i >= args.size()) {
    command.kind = CommandLine::Kind::kHelp;
    if (!command.globals.help) {
      return UsageError("missing mode or task",
                        "try: primus-cli direct -- <task> [args]   (primus-cli --help lists modes and tasks)");
    }
    return command;
  }

  const std::string& word = args[i];
  if (word == "help") {
    command.kind = CommandLine::Kind::kHelp;
    if (i + 1 < args.size()) command.help_topic = args[i + 1];
    return command;
  }
  if (word == "torchrun") {
    return ParseTorchrun(std::vector<std::string>(args.begin() + static_cast<long>(i) + 1, args.end()), environment,
                         /*python_beside=*/"", std::move(command));
  }
  if (word == "config" || word == "completion") {
    command.kind = word == "config" ? CommandLine::Kind::kConfigCommand : CommandLine::Kind::kCompletion;
    command.builtin_args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
    return command;
  }
  if (RuntimeRegistry::Global().Find(word)) {
    Status status = ParseMode(args, i, &command);
    if (!status.ok()) return status.error();
    return command;
  }
  if (TaskRegistry::Global().Find(word) || IsPrimusSubcommand(word)) {
    runtime::ModeInvocation direct;
    direct.mode = "direct";
    command.invocation.chain.push_back(direct);
    command.invocation.implicit_direct = true;
    bool primus_subcommand = !TaskRegistry::Global().Find(word);
    command.invocation.task = primus_subcommand ? "primus" : word;
    command.invocation.task_args.assign(args.begin() + static_cast<long>(primus_subcommand ? i : i + 1), args.end());
    command.kind = CommandLine::Kind::kLaunch;
    return command;
  }
  if (command.globals.help) {
    command.kind = CommandLine::Kind::kHelp;
    return command;
  }
  std::vector<std::string> words = ModesAndTasks();
  words.push_back("torchrun");
  return UsageError("unknown mode or task '" + word + "'" + DidYouMean(word, words),
                    "modes: " + Join(RuntimeRegistry::Global().Names(), ", ") + "; tasks: " + TaskList());
}

}  // namespace primus::cli
