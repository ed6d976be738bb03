// A task is what runs at the end of a command line: train, benchmark,
// preflight, analyze, run, info. Each task lives in its own file and
// registers itself with a static TaskRegistration, so adding a task touches
// no core file; the registry is what --help lists and what dispatch consults.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"
#include "util/registry.h"

namespace primus::config {
class LauncherConfig;
}

namespace primus::tasks {

// Everything a task needs from the layers above it.
struct TaskContext {
  std::vector<std::string> args;           // after the task name: subtask first, then its arguments
  std::vector<std::string> command_line;   // the whole argv as the user typed it (for snapshots)
  const config::LauncherConfig* launcher = nullptr;  // the effective launcher configuration
  bool dry_run = false;                    // print what would happen; execute nothing
  bool debug = false;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;    // one line for the task list
  virtual std::vector<std::string> subtasks() const { return {}; }
  virtual std::string help() const = 0;       // full --help text
  // The help of one subtask (`benchmark gemm --help`): its usage, what it
  // does, its options and examples; "" when the task has one page for all.
  virtual std::string subtask_help(const std::string& subtask) const { return ""; }
  // The option tables the task parses `subtask`'s arguments with (the
  // subtask is "" for a task without subtasks): shell completion and the
  // man pages read the same tables. Empty where the arguments are passed on
  // unread (run's command).
  virtual std::vector<const std::vector<OptionSpec>*> options(const std::string& subtask) const { return {}; }
  // The words shell completion offers for a positional argument (init's
  // models, a job command's run ids), and whether paths are offered too
  // (always when there are no words).
  virtual std::vector<std::string> positional_words(const std::string& subtask) const { return {}; }
  virtual bool positional_paths() const { return true; }
  // Whether these task arguments ask for the task's help. By default any
  // --help/-h does; a task that passes arguments on to a command (run)
  // only looks at the first one.
  virtual bool IsHelpRequest(const std::vector<std::string>& args) const;
  // True for a task that only reads and prints on this host (analyze,
  // monitor): it starts no agent and no workers, so it may run anywhere,
  // such as a Slurm allocation's batch shell, where a launch would be refused.
  virtual bool in_process() const { return false; }
  // Returns the process exit status (the worker's own code for agent-run tasks).
  virtual Result<int> Run(const TaskContext& context) = 0;
};

// One subtask's page of help (`benchmark gemm --help`), for a task whose
// subtasks differ enough to want a page each.
struct SubtaskPage {
  std::string name;
  std::string usage;                  // after "<task> <name>"
  std::string about;                  // a paragraph
  std::vector<std::string> examples;  // whole command lines; the first is the overview's
};

// The page: `command` ("primus-cli [direct --] analyze") and its usage,
// wrapped, the paragraph, "<name> options:" with `options`, the examples,
// then `footer` (exit codes, where to read more).
std::string FormatSubtaskPage(const std::string& command, const SubtaskPage& page,
                              const std::vector<OptionSpec>& options, const std::string& footer);
// The task's overview of them: one wrapped "name: about" each, then
// "Examples:" with each page's first example.
std::string FormatSubtaskOverview(const std::vector<SubtaskPage>& pages);

class TaskRegistry : public Registry<Task> {
 public:
  static TaskRegistry& Global();
  std::vector<std::string> Names() const;  // sorted
};

// `TaskRegistration<TrainTask> train_registration;` (in an anonymous namespace) in the task's own file.
template <typename T>
struct TaskRegistration {
  TaskRegistration() { TaskRegistry::Global().Register(std::make_unique<T>()); }
};

}  // namespace primus::tasks
