// The `monitor` task: a live view of a running job from any node, read from
// the job view node 0's agent writes (docs/monitor.md). It runs in this
// process, never as agent workers:
//   monitor [TARGET] [--once] [--json] [--interval S] [--ascii]
// On a terminal the view is redrawn in place every interval (the alternate
// screen, restored on exit, q, Ctrl-C or SIGTERM); into a pipe or a file
// one block of plain lines per refresh. It ends with the job.
// Exit codes: 0 the job runs or succeeded (or the view was left with q or
// Ctrl-C), 1 the job failed, 2 bad arguments, 4 no job view could be read
// (or a metrics port stopped answering while watched).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <optional>

#include "monitor/job_list.h"
#include "tasks/job_target_args.h"
#include "monitor/job_view_text.h"
#include "monitor/terminal_screen.h"
#include "tasks/task.h"
#include "util/clock.h"
#include "util/option_parser.h"
#include "util/process_stamp.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;
using nlohmann::json;

const std::vector<OptionSpec>& MonitorOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--once"}, K::kFlag, "", "", "print one view and exit"},
      {{"--json"}, K::kFlag, "", "", "the job view JSON as read (with --once: one document; else one line per refresh)"},
      {{"--interval"}, K::kValue, "SECONDS", "", "refresh every SECONDS (default: the job's sampling interval, else 2)"},
      {{"--ascii"}, K::kFlag, "", "", "only ASCII characters, whatever the locale"},
  };
  return table;
}

struct MonitorArgs {
  std::string target;
  bool once = false;
  bool json = false;
  bool ascii = false;
  std::optional<double> interval_s;
};

Result<MonitorArgs> ParseMonitorArgs(const std::vector<std::string>& args) {
  auto job = ParseJobTargetArgs(args, MonitorOptions(), "monitor",
                                "name an experiment directory, a log directory, a run id, a Slurm job id or HOST:PORT");
  if (!job.ok()) return job.error();
  MonitorArgs parsed;
  parsed.target = job->target;
  for (const ParsedOption& option : job->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--once") parsed.once = true;
    else if (name == "--json") parsed.json = true;
    else if (name == "--ascii") parsed.ascii = true;
    else if (name == "--interval") {
      auto seconds = ParseDouble(option.value);
      if (!seconds || !(*seconds >= 0.1) || *seconds > 86400) {
        return UsageError(option.written + " '" + option.value + "' is not a number of seconds from 0.1 to 86400",
                          "e.g. --interval 2");
      }
      parsed.interval_s = *seconds;
    }
  }
  return parsed;
}

std::string ClockTime(double epoch) {
  std::time_t seconds = static_cast<std::time_t>(epoch);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

double ViewInterval(const json& view) {
  auto job = view.find("job");
  if (job == view.end() || !job->is_object()) return 0;
  auto interval = job->find("interval_s");
  return (interval != job->end() && interval->is_number() && interval->get<double>() > 0) ? interval->get<double>() : 0;
}

// Refreshes in a row that may fail to reach a metrics port before the
// monitor gives up on it (a file is only ever replaced whole: it retries).
constexpr int kHttpFailuresBeforeGivingUp = 3;

// How the monitor exits once the job ended: 1 when it failed or ended
// without a record, else 0.
int ExitFor(const json& view) {
  std::string ended = monitor::EndedState(view);
  return ended == "failed" || ended == kEndedWithoutRecord ? 1 : 0;
}

class Monitor {
 public:
  Monitor(const MonitorArgs& args, monitor::JobSource source, json view)
      : args_(args), source_(std::move(source)), view_(std::move(view)) {}

  Result<int> Run() {
    double interval = args_.interval_s.value_or(ViewInterval(view_) > 0 ? ViewInterval(view_) : 2);
    bool terminal = !args_.json && ::isatty(STDOUT_FILENO);
    bool ascii = args_.ascii || !monitor::Utf8Locale();
    bool color = terminal && monitor::ColorWanted();
    std::optional<monitor::TerminalScreen> screen;
    if (terminal) screen.emplace(STDOUT_FILENO, STDIN_FILENO);
    monitor::RefreshWait wait(terminal && ::isatty(STDIN_FILENO));
    while (true) {
      if (terminal) {
        monitor::TerminalSize size = screen->Size();
        monitor::ViewOptions options{size.columns, size.rows - 1, ascii, WallSeconds(), interval};
        std::vector<monitor::ViewLine> lines = monitor::LayoutJobView(view_, options);
        lines.push_back(Footer(interval, size.columns));
        screen->Draw(monitor::DrawScreen(lines, color));
      } else if (args_.json) {
        std::cout << view_.dump() << "\n" << std::flush;
      } else {
        std::cout << "--- " << ClockTime(WallSeconds()) << "  " << source_.Describe() << "\n";
        if (!read_error_.empty()) std::cout << read_error_ << "\n";
        monitor::ViewOptions options{0, 0, ascii, WallSeconds(), interval};
        std::cout << monitor::DrawLines(monitor::LayoutJobView(view_, options), false) << "\n" << std::flush;
      }
      if (!monitor::EndedState(view_).empty()) break;
      monitor::RefreshWait::Event event = wait.Wait(interval);
      if (event == monitor::RefreshWait::Event::kQuit) return 0;
      if (event == monitor::RefreshWait::Event::kResize) continue;
      Refresh();
      if (source_.http && failures_ >= kHttpFailuresBeforeGivingUp) {
        // The agent serves the port for as long as the job runs: a port that
        // stopped answering is a job that ended, or an agent that is gone.
        if (screen) screen->Restore();
        return UnavailableError(source_.Describe() + " stopped answering (" + last_error_ + ")",
                                "the job ended or its agent is gone; its last view is in node 0's log directory "
                                "(primus-cli monitor LOG_DIR --once)");
      }
    }
    // The job ended: its last view stays on the shell's screen, as it was
    // drawn (one row left for the shell's prompt).
    if (screen) {
      screen->Restore();
      monitor::TerminalSize size = screen->Size();
      monitor::ViewOptions options{size.columns, size.rows - 1, ascii, WallSeconds(), interval};
      std::cout << monitor::DrawLines(monitor::LayoutJobView(view_, options), color) << std::flush;
    }
    return ExitFor(view_);
  }

 private:
  void Refresh() {
    Result<json> view = monitor::ReadJobView(source_, 5);
    if (!view.ok()) {
      // The last view stays up, and says why it is not new.
      ++failures_;
      last_error_ = EscapeControlCharacters(view.error().message);
      read_error_ = "cannot read the job view: " + last_error_ + " (retrying)";
      return;
    }
    failures_ = 0;
    read_error_.clear();
    view_ = std::move(*view);
  }

  monitor::ViewLine Footer(double interval, int width) const {
    if (!read_error_.empty()) return {read_error_.substr(0, static_cast<size_t>(std::max(width, 1))), monitor::LineStyle::kBad};
    std::string text = fmt::format("{}  every {}s  q or Ctrl-C: quit", source_.Describe(), interval);
    if (static_cast<int>(text.size()) > width) text = text.substr(text.size() - width);
    return {text, monitor::LineStyle::kPlain};
  }

  MonitorArgs args_;
  monitor::JobSource source_;
  json view_;
  std::string read_error_;
  std::string last_error_;
  int failures_ = 0;  // reads failed in a row
};

class MonitorTask : public Task {
 public:
  std::string name() const override { return "monitor"; }
  std::string summary() const override { return "a live view of a running job: progress, stragglers, every node and rank"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&MonitorOptions()}; }
  std::vector<std::string> positional_words(const std::string&) const override { return JobTargetWords(true); }
  std::string help() const override {
    return "usage: primus-cli [direct --] monitor [TARGET] [--once] [--json] [--interval S] [--ascii]\n"
           "\n"
           "Shows a running job as node 0's agent sees it: run id, state, restarts, step and progress with its\n"
           "ETA, loss and tokens/s, stragglers and why, then each node (CPU, memory, network, GPUs) and each\n"
           "rank (state, step, loss, tokens/s, step time, CPU, memory, its GPU). On a terminal the view is\n"
           "redrawn in place and fitted to the window; into a pipe or a file it prints one block per refresh.\n"
           "It ends when the job ends.\n"
           "\n"
           "TARGET  an experiment directory (its logs/telemetry/job.json), a log directory (telemetry/job.json),\n"
           "        a job.json file, a run id (${TMPDIR:-/tmp}/primus-<uid>/<run id>, or an experiment under\n"
           "        ./output whose job is that run), a Slurm job id (./output/<name>_<job id>, as slurm sbatch\n"
           "        names it), or HOST:PORT of a job run with --metrics-port. None: your running job, the one\n"
           "        started from this directory when several run (listed, not guessed, when that is not one).\n"
           "\n" +
           FormatOptionHelp(MonitorOptions()) +
           "\nExamples:\n"
           "  primus-cli monitor                      # your running job\n"
           "  primus-cli monitor 1234567 --once       # a Slurm job, one view\n"
           "  primus-cli monitor node0:9400 --json    # a job run with --metrics-port 9400\n"
           "\nKeys: q or Ctrl-C leave the view (the job goes on).\n"
           "Exit codes: 0 the job runs or succeeded, or the view was left; 1 the job failed; 2 bad arguments;\n"
           "4 no job view found or readable (the message lists where it looked), or a HOST:PORT that stopped\n"
           "answering while watched. docs/monitor.md has the details.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseMonitorArgs(context.args);
    if (!args.ok()) return args.error();
    monitor::SearchPlaces places = monitor::SearchPlaces::FromEnvironment();
    auto source = monitor::ResolveJob(args->target, places, monitor::JobChoice::kRunning);
    if (!source.ok()) return source.error();
    if (context.dry_run) {
      std::cout << "monitor: would read " << source->Describe() << (args->once ? " once" : " until the job ends")
                << "; reads only\n";
      return 0;
    }
    auto text = monitor::ReadJobViewText(*source, 5);
    if (!text.ok()) return text.error();
    auto view = monitor::ParseJobView(*text, source->Describe());
    if (!view.ok()) return view.error();
    if (args->once) {
      if (args->json) {
        std::cout << *text << (text->ends_with('\n') ? "" : "\n") << std::flush;
      } else {
        bool terminal = ::isatty(STDOUT_FILENO);
        monitor::ViewOptions options;
        options.width = terminal ? monitor::TerminalSizeOf(STDOUT_FILENO).columns : 0;
        options.ascii = args->ascii || !monitor::Utf8Locale();
        options.now = WallSeconds();
        options.interval_s = args->interval_s.value_or(2);
        std::cout << monitor::DrawLines(monitor::LayoutJobView(*view, options), terminal && monitor::ColorWanted())
                  << std::flush;
      }
      return ExitFor(*view);
    }
    return Monitor(*args, *source, std::move(*view)).Run();
  }
};

TaskRegistration<MonitorTask> monitor_registration;

}  // namespace
}  // namespace primus::tasks
