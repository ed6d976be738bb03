#include "cli/dispatch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "agent/stdin_session.h"
#include "cli/command_line.h"
#include "cli/completion.h"
#include "cli/flag_settings.h"
#include "cli/help.h"
#include "cli/man_page.h"
#include "cli/plan.h"
#include "util/abnormal_end.h"
#include "util/console_writer.h"
#include "util/environment.h"
#include "util/files.h"
#include <cstdio>

#include "config/launcher_config.h"
#include "config/render_config.h"
#include "config/value.h"
#include "runtime/runtime.h"
#include "snapshot/redaction.h"
#include "tasks/task.h"
#include "train/experiment.h"
#include "train/launch_settings.h"
#include "util/log.h"
#include "util/output_tee.h"
#include "util/private_files.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

// The command's own error, as a command line tool says it (not a log line:
// no time, host or level): "primus-cli: error: ..." and the hint, on stderr
// whatever --quiet says, redacted like every line we print.
int Fail(const Error& error) {
  const snapshot::Redactor& redactor = snapshot::ProcessRedactor();
  // Arguments, a peer's or a tool's words may be in it: no raw control character reaches the terminal.
  auto clean = [&](const std::string& text) { return EscapeControlCharacters(redactor.Text(text), true); };
  std::string text = "primus-cli: error: " + clean(error.message) + "\n";
  if (!error.hint.empty()) text += "  hint: " + clean(error.hint) + "\n";
  std::fflush(stdout);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  return static_cast<int>(error.code);
}

// Logging flags take effect before the configuration is read, so that
// problems while reading it are reported at the level the user asked for.
void ApplyLoggingFlags(const GlobalSettings& globals) {
  for (const ParsedOption& option : globals.config_flags) {
    const std::string& name = option.spec->names.front();
    log::Level level;
    if (name == "--debug" && option.value == "true") log::SetLevel(log::Level::kDebug);
    if (name == "--quiet" && option.value == "true") log::SetLevel(log::Level::kWarn);
    if (name == "--log-level" && log::ParseLevel(option.value, &level)) log::SetLevel(level);
  }
}

// main.* keys from files and the environment, once the configuration is known:
// the log level and the modes of what we create.
Status ApplyLoggingConfig(const config::LauncherConfig& config) {
  const config::Value& launcher = config.effective();
  const config::Value* debug = launcher.Find("main.debug");
  const config::Value* quiet = launcher.Find("main.quiet");
  const config::Value* level_value = launcher.Find("main.log_level");
  log::Level level = log::Level::kInfo;
  if (level_value && level_value->IsString() && !log::ParseLevel(level_value->AsString(), &level)) {
    return ConfigError(level_value->origin().Describe() + ": main.log_level must be debug, info, warn or error, not '" +
                           level_value->AsString() + "'",
                       "set main.log_level to one of debug, info, warn, error");
  }
  if (quiet && quiet->IsBool() && quiet->AsBool()) level = log::Level::kWarn;
  if (debug && debug->IsBool() && debug->AsBool()) level = log::Level::kDebug;
  log::SetLevel(level);
  // What we create under run and experiment directories (util/private_files.h).
  const config::Value* group_readable = launcher.Find("main.group_readable");
  ShareWithGroup(group_readable && group_readable->IsBool() && group_readable->AsBool());
  return Status::Ok();
}

Result<config::LauncherConfig> LoadLauncher(const CommandLine& command) {
  auto flags = FlagSettings(command);
  if (!flags.ok()) return flags.error();
  // Values of secret names given on the command line (--env HF_TOKEN=..., a
  // --env FILE's lines) are redacted wherever they would be printed.
  for (const config::FlagSetting& flag : *flags) {
    if (flag.key != "direct.env") continue;
    for (const std::string& entry : flag.values) {
      size_t equals = entry.find('=');
      if (equals != std::string::npos) snapshot::ProcessRedactor().Learn(entry.substr(0, equals), entry.substr(equals + 1));
    }
  }
  auto sources = config::LauncherSources::FromProcess(command.globals.config_file, command.globals.set_assignments,
                                                      std::move(*flags));
  sources.program_defaults = command.program_defaults;
  sources.program = command.invocation.program;
  // slurm and k8s submit from a login node, ssh launches from any host; the
  // scheduler's settings (and an inner `direct --platform slurm`) are for the
  // nodes they start.
  if (!command.invocation.chain.empty()) {
    const std::string& outer = command.invocation.chain.front().mode;
    sources.detect_scheduler = outer != "slurm" && outer != "k8s" && outer != "ssh";
  }
  auto launcher = config::LoadLauncherConfig(sources);
  if (launcher.ok()) {
    for (const std::string& warning : launcher->warnings()) log::Warn("{}", warning);
  }
  return launcher;
}

// `config show --experiment FILE`: the configuration `train --config FILE`
// would launch with, the experiment's launch settings in their layer.
Result<config::LauncherConfig> WithExperiment(const config::LauncherConfig& launcher, const std::string& file) {
  train::ExperimentRequest request;
  request.file = file;
  request.environment = ProcessEnvironment();
  auto experiment = train::LoadExperiment(request);
  if (!experiment.ok()) return experiment.error();
  return train::WithExperimentLaunchSettings(launcher, *experiment);
}

int RunConfigCommand(const CommandLine& command) {
  static const std::string usage = "usage: primus-cli config show [--origin] [--experiment FILE]";
  const auto& args = command.builtin_args;
  bool help = std::any_of(args.begin(), args.end(), [](const std::string& arg) { return arg == "--help" || arg == "-h"; });
  if (args.empty() || help) {
    std::cout << *TopicHelp("config");
    return args.empty() ? static_cast<int>(ExitCode::kUsage) : 0;
  }
  if (args[0] != "show") {
    return Fail(UsageError("unknown config command '" + args[0] + "'" + DidYouMean(args[0], {"show"}), usage));
  }
  auto parsed = ParseOptions(args, 1, {&ConfigShowOptions()}, UnknownOptionPolicy::kReject, "config show");
  if (!parsed.ok()) return Fail(parsed.error());
  if (parsed->next < args.size()) {
    return Fail(UsageError("unexpected argument '" + args[parsed->next] + "' for config show",
                           usage));
  }
  bool with_origin = false, as_json = false;
  std::string experiment;
  for (const ParsedOption& option : parsed->options) {
    if (option.spec->names[0] == "--origin") with_origin = option.value == "true";
    if (option.spec->names[0] == "--json") as_json = option.value == "true";
    if (option.spec->names[0] == "--experiment") experiment = option.value;
  }
  auto launcher = LoadLauncher(command);
  if (!launcher.ok()) return Fail(launcher.error());
  if (!experiment.empty()) {
    launcher = WithExperiment(*launcher, experiment);
    if (!launcher.ok()) return Fail(launcher.error());
  }
  std::cout << (as_json ? config::RenderConfigJson(launcher->effective(), with_origin)
                       : config::RenderConfig(launcher->effective(), with_origin));
  return 0;
}

int RunLaunch(const CommandLine& command, const std::vector<std::string>& args) {
  const runtime::Invocation& invocation = command.invocation;
  tasks::Task* task = tasks::TaskRegistry::Global().Find(invocation.task);
  if (task->IsHelpRequest(invocation.task_args)) {
    // `benchmark gemm --help`: that subtask's page, where the task has one.
    std::string scoped = invocation.task_args.empty() ? "" : task->subtask_help(invocation.task_args.front());
    std::cout << (scoped.empty() ? *TopicHelp(task->name()) : scoped);
    return 0;
  }
  auto launcher = LoadLauncher(command);
  if (!launcher.ok()) return Fail(launcher.error());
  if (Status status = ApplyLoggingConfig(*launcher); !status.ok()) return Fail(status.error());
  ApplyLoggingFlags(command.globals);

  // How torchrun's command line was read: what only tunes torchrun is said
  // at debug level, what we accept but cannot honour as a warning.
  for (const TorchrunNote& note : command.notes) {
    if (note.level == TorchrunNote::Level::kWarn) log::Warn("torchrun: {}", note.text);
    else if (note.level == TorchrunNote::Level::kDebug || !command.globals.dry_run) log::Debug("torchrun: {}", note.text);
  }

  runtime::Runtime* outer = runtime::RuntimeRegistry::Global().Find(invocation.chain.front().mode);
  runtime::RuntimeContext context;
  context.invocation = &invocation;
  if (!command.typed.empty()) {
    context.command_line = command.typed;
  } else {
    context.command_line = {"primus-cli"};
    context.command_line.insert(context.command_line.end(), args.begin(), args.end());
  }
  context.launcher = &*launcher;
  context.dry_run = command.globals.dry_run;
  context.debug = log::Enabled(log::Level::kDebug);

  if (command.globals.silent && !context.dry_run) {
    // Primus's --silent: stdout goes nowhere, before the tee takes it, so
    // that --log-file still gets everything; stderr (our log) stays.
    std::cout.flush();
    std::fflush(stdout);
    int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
  std::unique_ptr<OutputTee> log_file;
  if (!command.globals.log_file.empty() && !context.dry_run) {
    log::SetColor(false);  // the file gets the same bytes as the terminal
    auto tee = OutputTee::Start(command.globals.log_file);
    if (!tee.ok()) return Fail(tee.error());
    log_file = std::move(*tee);
    log::Info("--log-file: a copy of this run's output goes to {}", command.globals.log_file);
  }
  if (context.dry_run) {
    std::cout << FormatPlan(invocation, *launcher);
    if (!command.globals.log_file.empty()) {
      std::cout << "log file: " << command.globals.log_file
                << " would receive a copy of everything printed (not created under --dry-run)\n";
    }
    std::cout << std::flush;
  }
  log::Debug("launch: mode {} task {} {}", outer->name(), invocation.task, ShellJoin(invocation.task_args));
  auto result = outer->Execute(context);
  if (!result.ok()) return Fail(result.error());
  return *result;
}

int RunCompletion(const CommandLine& command) {
  const auto& args = command.builtin_args;
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << *TopicHelp("completion");
    return args.empty() ? static_cast<int>(ExitCode::kUsage) : 0;
  }
  if (args.size() > 1) {
    return Fail(UsageError("unexpected argument '" + args[1] + "' for 'completion'",
                           "usage: primus-cli completion bash|zsh|fish"));
  }
  auto script = CompletionScript(args[0]);
  if (!script.ok()) return Fail(script.error());
  std::cout << *script;
  return 0;
}

// Hidden commands the build and the completion scripts call:
//   __complete WORD... CURRENT   what completes CURRENT (cli/completion.h)
//   __man PAGE | --dir DIR       one manual page, or all of them into DIR (cli/man_page.h)
// Returns -1 for any other command line.
int RunHidden(const std::vector<std::string>& args) {
  if (args.empty()) return -1;
  if (args[0] == "__complete") {
    std::cout << FormatCompletion(Complete(std::vector<std::string>(args.begin() + 1, args.end())));
    return 0;
  }
  if (args[0] != "__man") return -1;
  if (args.size() == 3 && args[1] == "--dir") {
    auto written = WriteManPages(args[2]);
    if (!written.ok()) return Fail(written.error());
    return 0;
  }
  if (args.size() != 2) return Fail(UsageError("usage: primus-cli __man PAGE | --dir DIR"));
  auto page = ManPage(args[1]);
  if (!page.ok()) return Fail(page.error());
  std::cout << *page;
  return 0;
}

int LastResort(const std::string& why) {
  log::Error("{} (please report it, with the command line)", why);
  FinishRecordsAbnormally(why);
  return static_cast<int>(ExitCode::kTaskFailed);
}

// The python3 in the directory of the torchrun that was run: argv[0] when it
// has a directory (/venv/bin/torchrun), else the first torchrun on PATH; ""
// when there is none there.
std::string PythonBesideTorchrun(std::string_view program) {
  std::string path = program.find('/') == std::string_view::npos ? FindExecutable(std::string(program))
                                                                   : std::string(program);
  if (path.empty()) return "";
  std::string dir = DirName(path);
  std::string python = JoinPath(dir, "python3");
  if (!IsExecutableFile(python)) return "";
  return python;
}

int RunMain(std::string_view program, const std::vector<std::string>& args) {
  // An agent started by `primus-cli ssh` takes its job token from stdin
  // before anything reads the environment (agent/stdin_session.h).
  if (Status session = agent::SetUpStdinSession(); !session.ok()) return Fail(session.error());
  // Secrets never reach the terminal: not in the log, not in the plan
  // --dry-run prints (snapshot/redaction.h).
  snapshot::RedactProcessOutput();
  size_t slash = program.rfind('/');
  std::string_view name = slash == std::string_view::npos ? program : program.substr(slash + 1);
  if (name != "torchrun") {
    if (int status = RunHidden(args); status >= 0) return status;
  } else if (!args.empty() && args[0] == "__complete") {
    // The completion script, for the torchrun link: its words are torchrun's.
    std::vector<std::string> words = {"torchrun"};
    words.insert(words.end(), args.begin() + 1, args.end());
    std::cout << FormatCompletion(Complete(words));
    return 0;
  }
  auto command = ParseCommandLine(args, ProcessEnvironment(), name == "torchrun" ? "torchrun" : "primus-cli",
                                  name == "torchrun" ? PythonBesideTorchrun(program) : "");
  if (!command.ok()) return Fail(command.error());
  ApplyLoggingFlags(command->globals);

  switch (command->kind) {
    case CommandLine::Kind::kVersion:
      std::cout << VersionText();
      return 0;
    case CommandLine::Kind::kHelp: {
      if (command->help_topic.empty()) {
        std::cout << OverviewHelp();
        return 0;
      }
      auto help = TopicHelp(command->help_topic);
      if (!help.ok()) return Fail(help.error());
      std::cout << *help;
      return 0;
    }
    case CommandLine::Kind::kConfigCommand:
      return RunConfigCommand(*command);
    case CommandLine::Kind::kCompletion:
      return RunCompletion(*command);
    case CommandLine::Kind::kLaunch:
      return RunLaunch(*command, args);
  }
  return 0;
}

}  // namespace

int Main(std::string_view program, const std::vector<std::string>& args) {
  InstallTerminateHandler();
  int code;
  // The last resort: whatever escaped is exit 1 with a message, and a task's
  // record (metadata.json) is finished, never left "running".
  try {
    code = RunMain(program, args);
  } catch (const std::exception& error) {
    code = LastResort(std::string("an internal error ended primus-cli: ") + error.what());
  } catch (...) {
    code = LastResort("an internal error ended primus-cli: an unknown exception");
  }
  console_writer::Stop();  // what a launch queued for the console gets there
  return code;
}

}  // namespace primus::cli
