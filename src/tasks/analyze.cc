// The `analyze` task: after a job, what went wrong and how it ran; before
// one, how the host is wired. Four subtasks over the analyze layer:
//   logs <experiment-dir|log-dir|files...> [--json] [--signatures FILE]
//   run <experiment-dir> [--json] [--plot FILE.svg] [--html FILE.html]
//   hang <experiment-dir|log-dir|attempt-dir> [--json] [--attempt N]
//   topology [--visualize] [--output FILE.svg|.png|.dot]
// Exit codes: 0 whenever the analysis ran (failures found in the logs are
// its result, not its failure), 2 bad arguments, 3 a bad signature file,
// 4 a path that cannot be read (or holds no stacks, for hang), or Graphviz
// missing for --visualize.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "analyze/hang_report.h"
#include "analyze/log_report.h"
#include "analyze/log_scan.h"
#include "analyze/run_report.h"
#include "analyze/run_report_html.h"
#include "analyze/run_summary.h"
#include "analyze/signature_db.h"
#include "analyze/topology.h"
#include "util/svg_chart.h"
#include "platform/host_detect.h"
#include "tasks/task.h"
#include "util/log.h"
#include "util/clock.h"
#include "monitor/job_list.h"
#include "util/files.h"
#include "util/option_parser.h"
#include "util/progress_line.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& AnalyzeOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--json"}, K::kFlag, "", "", "JSON on standard output instead of text"},
      {{"--attempt"}, K::kValue, "N", "", "hang: judge attempt N (default: the latest with stacks or dumps)"},
      {{"--signatures"}, K::kValue, "FILE", "", "logs: a signature file replacing the built-in data/signatures.yaml"},
      {{"--plot"}, K::kValue, "FILE.svg", "", "run: draw loss and tokens/s over time (default <dir>/run.svg)"},
      {{"--html"}, K::kValue, "FILE.html", "", "run: also write the run report, one self-contained HTML page"},
      {{"--visualize"}, K::kFlag, "", "", "topology: also draw the topology with Graphviz"},
      {{"--output"}, K::kValue, "FILE", "",
       "topology: also write it to FILE, the format from its name: .json, or a picture (.svg, .png, .dot)"},
  };
  return table;
}

struct AnalyzeArgs {
  std::string subtask;
  std::vector<std::string> paths;
  bool json = false;
  std::string signatures;
  std::string plot;
  std::string html;
  bool visualize = false;
  std::string output;
  std::optional<int> attempt;
};

// What `analyze logs|run|hang` reads when no path is given: the log
// directory of this user's job started from here (the running one, else the
// latest; monitor/job_list.h), and for `run` the experiment directory around
// it (the one holding metadata.json: a train run's).
Result<std::string> DefaultAnalyzePath(const std::string& subtask) {
  auto job = monitor::ChooseJob(monitor::ListJobs(monitor::SearchPlaces::FromEnvironment(), WallSeconds()), CurrentDir(),
                                monitor::JobChoice::kRunningOrLatest);
  if (!job.ok()) {
    return Error{job.error().code, "analyze " + subtask + " without a path: " + job.error().message,
                 "name one: primus-cli analyze " + subtask + " output/exp_20261124_091927"};
  }
  log::Info("analyze {}: job {} ({})", subtask, job->run_id, job->log_dir);
  if (subtask != "run") return job->log_dir;
  // The log directory is <exp>/logs, or a fresh run directory inside it (a requeued job's).
  std::string logs = job->log_dir;
  for (std::string dir : {DirName(logs), DirName(DirName(logs))}) {
    if (logs.starts_with(dir + "/logs") && PathExists(JoinPath(dir, "metadata.json"))) return dir;
  }
  return UnavailableError("job " + job->run_id + " has no experiment directory (metadata.json): analyze run reads a "
                              "train run's; its logs are in " + job->log_dir,
                          "primus-cli analyze logs " + job->log_dir);
}

// Flags may come before, between or after the paths.
Result<AnalyzeArgs> ParseAnalyzeArgs(const std::vector<std::string>& args) {
  AnalyzeArgs parsed;
  if (args.empty()) {
    return UsageError("analyze needs a subtask: logs, run, hang or topology", "see primus-cli analyze --help");
  }
  parsed.subtask = args[0];
  if (parsed.subtask != "logs" && parsed.subtask != "run" && parsed.subtask != "hang" && parsed.subtask != "topology") {
    return UsageError("unknown analyze subtask '" + parsed.subtask + "'" +
                          DidYouMean(parsed.subtask, {"logs", "run", "hang", "topology"}),
                      "choose logs, run, hang or topology");
  }
  size_t at = 1;
  while (at < args.size()) {
    auto options = ParseOptions(args, at, {&AnalyzeOptions()}, UnknownOptionPolicy::kReject, "analyze " + parsed.subtask);
    if (!options.ok()) return options.error();
    for (const ParsedOption& option : options->options) {
      const std::string& name = option.spec->names.front();
      if (name == "--json") parsed.json = true;
      else if (name == "--signatures") parsed.signatures = option.value;
      else if (name == "--plot") parsed.plot = option.value;
      else if (name == "--html") parsed.html = option.value;
      else if (name == "--visualize") parsed.visualize = true;
      else if (name == "--output") parsed.output = option.value;
      else if (name == "--attempt") {
        auto number = ParseInt(option.value);
        if (!number || *number < 0) {
          return UsageError("--attempt takes an attempt number (0, 1, ...), not '" + option.value + "'",
                            "the attempts are the attempt_<n> directories of the run's logs");
        }
        parsed.attempt = static_cast<int>(*number);
      }
    }
    at = options->next;
    if (at < args.size()) parsed.paths.push_back(args[at++]);
  }
  auto only_for = [&](bool given, const char* flag, const char* subtask) -> Status {
    if (given && parsed.subtask != subtask) {
      return UsageError(std::string(flag) + " is for analyze " + subtask + ", not analyze " + parsed.subtask,
                        "see primus-cli analyze --help");
    }
    return Status::Ok();
  };
  for (Status status : {only_for(!parsed.signatures.empty(), "--signatures", "logs"),
                        only_for(!parsed.plot.empty(), "--plot", "run"), only_for(!parsed.html.empty(), "--html", "run"),
                        only_for(parsed.visualize, "--visualize", "topology"),
                        only_for(!parsed.output.empty(), "--output", "topology"),
                        only_for(parsed.attempt.has_value(), "--attempt", "hang")}) {
    if (!status) return status.error();
  }
  if (parsed.subtask != "topology" && parsed.paths.empty()) {
    // None named: this user's job started from here, running or the latest.
    auto path = DefaultAnalyzePath(parsed.subtask);
    if (!path.ok()) return path.error();
    parsed.paths.push_back(*path);
  }
  if (parsed.subtask == "run" && parsed.paths.size() != 1) {
    return UsageError("analyze run takes one experiment directory", "e.g. primus-cli analyze run output/exp_20261124_091927");
  }
  if (parsed.subtask == "hang" && parsed.paths.size() != 1) {
    return UsageError("analyze hang takes one run directory", "e.g. primus-cli analyze hang output/exp_20261124_091927");
  }
  if (parsed.subtask == "topology" && !parsed.paths.empty()) {
    return UsageError("analyze topology takes no path, not '" + parsed.paths.front() + "'",
                      "point PRIMUS_SYSFS_ROOT (and PRIMUS_PROCFS_ROOT) at a captured tree to look at another host");
  }
  if (!parsed.plot.empty()) {
    if (Status svg = CheckSvgPlotPath(parsed.plot, "--plot run.svg"); !svg) return svg.error();
  }
  if (!parsed.html.empty() && !ToLower(parsed.html).ends_with(".html") && !ToLower(parsed.html).ends_with(".htm")) {
    return UsageError("--html writes an HTML page: name the file *.html, not '" + parsed.html + "'",
                      "write --html report.html");
  }
  if (!parsed.output.empty() && !parsed.output.ends_with(".svg") && !parsed.output.ends_with(".png") &&
      !parsed.output.ends_with(".dot") && !parsed.output.ends_with(".json")) {
    return UsageError("--output names a .json, .svg, .png or .dot file, not '" + parsed.output + "'",
                      "write --output topology.json, or --output topology.svg for a picture");
  }
  if (!parsed.output.empty() && !parsed.output.ends_with(".json")) parsed.visualize = true;
  return parsed;
}

Result<int> AnalyzeLogs(const AnalyzeArgs& args) {
  auto db = args.signatures.empty() ? analyze::SignatureDb::Builtin() : analyze::SignatureDb::LoadFile(args.signatures);
  if (!db.ok()) return db.error();
  auto sources = analyze::FindLogSources(args.paths);
  if (!sources.ok()) return sources.error();
  if (sources->empty()) {
    return UnavailableError("no log files under " + Join(args.paths, ", "),
                            "name an experiment directory, a log directory (*.log, *.out) or the files themselves");
  }
  analyze::LogScan scan = [&] {
    ProgressLine progress("analyze logs: file");  // a terminal only, and gone before the report
    return analyze::ScanLogs(*sources, *db, [&](size_t done, size_t total, const std::string& next) {
      progress.Update(static_cast<long>(done), static_cast<long>(total), next.empty() ? "" : "(" + next.substr(next.rfind('/') + 1) + ")");
    });
  }();
  std::cout << (args.json ? analyze::LogReportJson(scan, *db) : analyze::FormatLogReport(scan, *db)) << std::flush;
  return 0;
}

Result<int> AnalyzeRun(const AnalyzeArgs& args) {
  auto summary = analyze::LoadRunSummary(args.paths.front());
  if (!summary.ok()) return summary.error();
  std::string plot = args.plot.empty() ? JoinPath(args.paths.front(), "run.svg") : args.plot;
  bool drawn = false;
  if (!summary->points.empty()) {
    if (Status written = WriteFileAtomic(plot, analyze::RenderRunPlot(*summary), kUserOutputMode); !written) return written.error();
    drawn = true;
  }
  if (!args.html.empty()) {
    auto report = analyze::LoadRunReport(args.paths.front());
    if (!report.ok()) return report.error();
    if (Status written = WriteFileAtomic(args.html, analyze::RenderRunReportHtml(*report), kUserOutputMode); !written) return written.error();
  }
  if (args.json) {
    std::cout << analyze::RunSummaryJson(*summary);
  } else {
    std::cout << analyze::FormatRunSummary(*summary);
    if (drawn) std::cout << "  plot:       " << plot << "\n";
    if (!args.html.empty()) std::cout << "  report:     " << args.html << "\n";
  }
  return 0;
}

Result<int> AnalyzeHang(const AnalyzeArgs& args) {
  auto report = analyze::LoadHangReport(args.paths.front(), args.attempt);
  if (!report.ok()) return report.error();
  std::cout << (args.json ? analyze::HangReportJson(*report) : analyze::FormatHangReport(*report)) << std::flush;
  return 0;
}

Result<int> AnalyzeTopology(const AnalyzeArgs& args) {
  platform::Roots roots = platform::Roots::FromEnvironment();
  analyze::Topology topology = analyze::BuildTopology(platform::DetectHost(roots), roots);
  std::cout << (args.json ? analyze::TopologyJson(topology) : analyze::FormatTopologyMatrix(topology));
  if (args.output.ends_with(".json")) {
    if (Status written = WriteFileAtomic(args.output, analyze::TopologyJson(topology), kUserOutputMode); !written) {
      return written.error();
    }
    if (!args.json) std::cout << "\nwritten: " << args.output << "\n";
    if (!args.visualize) return 0;
  }
  if (!args.visualize) return 0;
  std::string output = args.output.empty() || args.output.ends_with(".json") ? "topology.svg" : args.output;
  std::string dot_file = output.ends_with(".dot") ? output : output.substr(0, output.size() - 4) + ".dot";
  if (Status written = WriteFileAtomic(dot_file, analyze::TopologyDot(topology), kUserOutputMode); !written) return written.error();
  // Where the files went: on stderr under --json, whose stdout is the JSON alone.
  std::ostream& said = args.json ? std::cerr : std::cout;
  if (output == dot_file) {
    said << "\ngraph: " << dot_file << "\n";
    return 0;
  }
  std::string format = output.substr(output.size() - 3);
  auto rendered = RunCommand({"dot", "-T" + format, "-o", output, dot_file}, {.timeout_s = 60});
  if (!rendered.ok()) {
    return UnavailableError("Graphviz's dot is not installed, so " + output + " was not drawn (the graph is in " +
                                dot_file + ")",
                            "apt install graphviz, or render the .dot file elsewhere: dot -Tsvg " + dot_file);
  }
  if (rendered->exit_code != 0) {
    return TaskError("dot failed drawing " + output + ": " + rendered->Tail(5), "the graph is in " + dot_file);
  }
  said << "\npicture: " << output << " (graph: " << dot_file << ")\n";
  return 0;
}

constexpr const char* kAnalyzeExitCodes =
    "Exit codes: 0 the analysis ran (whatever it found), 2 bad arguments, 3 a bad signature file,\n"
    "4 a path that cannot be read, a run with no stacks (hang) or Graphviz missing. docs/analyze.md has\n"
    "the details.\n";

// One page per subtask: `analyze SUBTASK --help`, with the canonical names
// of AnalyzeOptions() it takes.
struct AnalyzePage {
  SubtaskPage page;
  std::vector<std::string> options;
};

const std::vector<AnalyzePage>& AnalyzePages() {
  static const std::vector<AnalyzePage> pages = {
      {{"logs", "[experiment-dir | log-dir | files...] [--json] [--signatures FILE]",
       "every known failure in the logs (data/signatures.yaml: pattern, meaning, fix), its first occurrence "
       "(file, line, host, rank, time), repeats grouped, the first failing rank of each attempt by timestamp "
       "across all files, and error-looking lines no signature explains",
       {"primus-cli analyze logs output/exp_20261124_091927"}},
       {"--json", "--signatures"}},
      {{"run", "[experiment-dir] [--json] [--plot FILE.svg] [--html FILE.html]",
       "a train run's summary (duration, restarts and the failure behind each, root cause, the launch settings "
       "and where they came from, steps/s, tokens/s, loss) and a plot of loss and tokens/s over time (SVG, "
       "<dir>/run.svg unless --plot); --html writes the run report: curves, step time per rank, GPU/CPU per "
       "node, restarts and failures on a timeline, configuration and environment with their origins, in one "
       "page that needs no network",
       {"primus-cli analyze run output/exp_20261124_091927 --html report.html"}},
       {"--json", "--plot", "--html"}},
      {{"hang", "[experiment-dir | log-dir | attempt-dir] [--json] [--attempt N]",
       "which rank a hung run's ranks wait for, from the stacks the agent took and the NCCL flight recorder's "
       "dumps of every host in the attempt's directory: the rank outside the collective the others are in, "
       "behind in a group's sequence, or in another collective",
       {"primus-cli analyze hang output/exp_20261124_091927"}},
       {"--json", "--attempt"}},
      {{"topology", "[--json] [--visualize] [--output FILE.json|.svg|.png|.dot]",
       "GPUs, NICs, NUMA and PCIe links as a matrix (nvidia-smi topo -m notation); --json gives it as JSON, "
       "--visualize draws it with Graphviz",
       {"primus-cli analyze topology --output topology.svg"}},
       {"--json", "--visualize", "--output"}},
  };
  return pages;
}

class AnalyzeTask : public Task {
 public:
  std::string name() const override { return "analyze"; }
  std::string summary() const override { return "diagnose logs, runs and hangs, show topology: logs | run | hang | topology"; }
  std::vector<std::string> subtasks() const override { return {"logs", "run", "hang", "topology"}; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&AnalyzeOptions()}; }
  std::string help() const override {
    std::vector<SubtaskPage> pages;
    for (const AnalyzePage& page : AnalyzePages()) pages.push_back(page.page);
    return "usage: primus-cli [direct --] analyze logs|run|hang|topology [args]\n"
           "       primus-cli analyze SUBTASK --help     (that subtask's page)\n\n"
           "Without a path, logs, run and hang read your job started from this directory: the running\n"
           "one, else the latest (primus-cli ps lists them).\n\n" +
           FormatSubtaskOverview(pages) + "\n" + FormatOptionHelp(AnalyzeOptions()) + "\n" + kAnalyzeExitCodes;
  }
  std::string subtask_help(const std::string& subtask) const override {
    for (const AnalyzePage& page : AnalyzePages()) {
      if (subtask != page.page.name) continue;
      std::vector<OptionSpec> own;
      for (const OptionSpec& spec : AnalyzeOptions()) {
        if (std::find(page.options.begin(), page.options.end(), spec.names.front()) != page.options.end()) {
          own.push_back(spec);
        }
      }
      return FormatSubtaskPage("primus-cli [direct --] analyze", page.page, own, kAnalyzeExitCodes);
    }
    return "";
  }
  bool in_process() const override { return true; }
  Result<int> Run(const TaskContext& context) override {
    auto args = ParseAnalyzeArgs(context.args);
    if (!args.ok()) return args.error();
    if (context.dry_run) {
      std::cout << "analyze " << args->subtask << (args->paths.empty() ? "" : " " + ShellJoin(args->paths))
                << ": reads only; nothing would be written\n";
      return 0;
    }
    if (args->subtask == "logs") return AnalyzeLogs(*args);
    if (args->subtask == "run") return AnalyzeRun(*args);
    if (args->subtask == "hang") return AnalyzeHang(*args);
    return AnalyzeTopology(*args);
  }
};

TaskRegistration<AnalyzeTask> analyze_registration;

}  // namespace
}  // namespace primus::tasks
