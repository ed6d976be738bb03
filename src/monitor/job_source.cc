#include "monitor/job_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "util/files.h"
#include "util/json_fields.h"
#include "telemetry/job_view.h"
#include "util/process_stamp.h"
#include "util/private_files.h"
#include "util/strings.h"

namespace primus::monitor {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "primus-job-telemetry/1";
constexpr size_t kMaxViewBytes = 64u << 20;  // a few KiB per node: far above any real job

const char* kNoViewHint =
    "node 0's agent writes telemetry/job.json in its log directory at every sample (every "
    "--telemetry-interval seconds, 5 by default; none with --telemetry-interval 0); name an experiment "
    "directory, a log directory, a run id or HOST:PORT of --metrics-port";

std::string ViewIn(const std::string& log_dir) { return JoinPath(log_dir, "telemetry/job.json"); }

bool IsFile(const std::string& path) {
  struct stat info{};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The directories directly under `dir`, sorted ("" entries never).
std::vector<std::string> SubDirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::error_code type_error;
    if (entry.is_directory(type_error)) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The job.json files a directory of each kind holds.
std::vector<std::string> ViewsUnderRuns(const std::string& runs_dir) {
  std::vector<std::string> views;
  for (const std::string& dir : SubDirs(runs_dir)) {
    if (IsFile(ViewIn(dir))) views.push_back(ViewIn(dir));
  }
  return views;
}

std::vector<std::string> ViewsUnderOutput(const std::string& output_dir) {
  std::vector<std::string> views;
  for (const std::string& dir : SubDirs(output_dir)) {
    if (IsFile(ViewIn(JoinPath(dir, "logs")))) views.push_back(ViewIn(JoinPath(dir, "logs")));
  }
  return views;
}

Result<json> ReadViewFile(const std::string& path) {
  auto text = ReadRegularFile(path, kMaxViewBytes);
  if (!text.ok()) return text.error();
  return ParseJobView(*text, path);
}

std::string RunIdOf(const json& view) {
  auto job = view.find("job");
  if (job == view.end() || !job->is_object()) return "";
  auto id = job->find("run_id");
  return (id != job->end() && id->is_string()) ? id->get<std::string>() : "";
}

Error NotFound(const std::string& what, const std::vector<std::string>& tried) {
  std::string message = what + "; looked for:";
  for (const std::string& place : tried) message += "\n    " + place;
  return UnavailableError(message, kNoViewHint);
}

bool LooksLikeEndpoint(const std::string& target) {
  if (target.starts_with("http://") || target.starts_with("https://")) return true;
  size_t colon = target.rfind(':');
  if (colon == std::string::npos || colon + 1 >= target.size()) return false;
  return ParseInt(target.substr(colon + 1)).has_value();
}

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

JobSource FileSource(const std::string& path) {
  JobSource source;
  source.file = path;
  return source;
}

}  // namespace

std::string JobSource::Describe() const { return http ? "http://" + endpoint.Describe() + "/job.json" : file; }

SearchPlaces SearchPlaces::FromEnvironment() {
  SearchPlaces places;
  places.runs_dir = DefaultRunsDir();
  places.output_dir = JoinPath(CurrentDir(), "output");
  return places;
}

Result<JobSource> ResolveTarget(const std::string& target, const SearchPlaces& places) {
  if (target.empty()) return UsageError("the monitor's TARGET is empty", "name an experiment directory, a log directory, a run id or HOST:PORT");
  if (PathExists(target)) {
    if (!IsDirectory(target)) return FileSource(target);
    std::vector<std::string> tried = {ViewIn(JoinPath(target, "logs")), ViewIn(target), JoinPath(target, "job.json")};
    // An experiment names its run's log directory (a fresh one inside logs/ when logs/ held an earlier run's).
    if (auto metadata = ReadRegularFile(JoinPath(target, "metadata.json"), kMaxViewBytes); metadata.ok()) {
      std::string log_dir = json_fields::Text(json_fields::ParseObject(*metadata).value_or(json()), "log_dir");
      if (!log_dir.empty()) tried.insert(tried.begin(), ViewIn(log_dir));
    }
    for (const std::string& path : tried) {
      if (IsFile(path)) return FileSource(path);
    }
    return NotFound("no job view in " + target, tried);
  }
  if (LooksLikeEndpoint(target)) {
    std::string address = target.ends_with("/job.json") ? target.substr(0, target.size() - 9) : target;
    auto endpoint = io::ParseHttpEndpoint(address, 0, "monitor's TARGET");
    if (!endpoint.ok()) {
      return UsageError(endpoint.error().message, "write HOST:PORT (or http://HOST:PORT), the port given to --metrics-port");
    }
    if (endpoint->port <= 0) {
      return UsageError("'" + target + "' names no port", "write HOST:PORT, the port given to --metrics-port");
    }
    JobSource source;
    source.http = true;
    source.endpoint = *endpoint;
    return source;
  }
  if (target.find('/') != std::string::npos) {
    return UnavailableError(target + ": no such file or directory",
                            "name an experiment directory, a log directory or a job.json file");
  }
  // A run id: the agent's default log directory, then experiments whose view names the run.
  // A reused run id got <id>_<8 hex digits> (agent/launch_plan.h): the newest view wins.
  std::vector<std::string> tried = {ViewIn(JoinPath(places.runs_dir, target))};
  std::string newest;
  int64_t newest_time = INT64_MIN;
  std::vector<std::string> candidates = {JoinPath(places.runs_dir, target)};
  for (const std::string& dir : SubDirs(places.runs_dir)) {
    std::string name = dir.substr(dir.rfind('/') + 1);
    if (name.size() == target.size() + 9 && name.starts_with(target + "_")) candidates.push_back(dir);
  }
  for (const std::string& dir : candidates) {
    struct stat info {};
    if (::stat(ViewIn(dir).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    int64_t time = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    if (time > newest_time) newest = ViewIn(dir), newest_time = time;
  }
  if (!newest.empty()) return FileSource(newest);
  if (candidates.size() > 1) tried.push_back(ViewIn(JoinPath(places.runs_dir, target + "_*")));
  for (const std::string& path : ViewsUnderOutput(places.output_dir)) {
    if (!IsOwnRegularFile(path)) continue;  // a shared ./output: another user's view may claim any run id
    auto view = ReadViewFile(path);
    if (view.ok() && RunIdOf(*view) == target) return FileSource(path);
  }
  tried.push_back(ViewIn(JoinPath(places.output_dir, "*/logs")) + " naming run " + target);
  if (AllDigits(target)) {
    // A Slurm job id: `slurm sbatch` names the job's experiment directory <name>_<job id>.
    for (const std::string& dir : SubDirs(places.output_dir)) {
      if (!dir.ends_with("_" + target)) continue;
      std::string path = ViewIn(JoinPath(dir, "logs"));
      if (IsFile(path)) return FileSource(path);
    }
    tried.push_back(ViewIn(JoinPath(places.output_dir, "*_" + target + "/logs")) + " (Slurm job " + target + ")");
  }
  return NotFound("no job '" + target + "' on this host (not a path, a run id or HOST:PORT)", tried);
}

std::vector<std::string> JobViewFiles(const SearchPlaces& places) {
  std::vector<std::string> views = ViewsUnderRuns(places.runs_dir);
  std::vector<std::string> under_output = ViewsUnderOutput(places.output_dir);
  views.insert(views.end(), under_output.begin(), under_output.end());
  return views;
}

Error NoJobFound(const std::string& what, const SearchPlaces& places) {
  return NotFound(what, {ViewIn(JoinPath(places.runs_dir, "*")), ViewIn(JoinPath(places.output_dir, "*/logs"))});
}

Result<std::string> ReadJobViewText(const JobSource& source, double timeout_s) {
  if (!source.http) {
    auto text = ReadRegularFile(source.file, kMaxViewBytes);
    if (!text.ok()) {
      Error error = text.error();
      error.hint = kNoViewHint;
      return error;
    }
    return *text;
  }
  io::HttpRequest request;
  request.target = "/job.json";
  auto response = io::SendHttpRequest(source.endpoint, request, timeout_s, kMaxViewBytes);
  if (!response.ok()) {
    Error error = response.error();
    error.code = ExitCode::kUnavailable;
    if (error.hint.empty()) error.hint = "is the job running with --metrics-port " + std::to_string(source.endpoint.port) + " on " + source.endpoint.host + "?";
    return error;
  }
  if (response->status != 200) {
    return UnavailableError(fmt::format("{} answered HTTP {}", source.Describe(), response->status),
                            "is this the port given to --metrics-port? The agent serves /job.json there");
  }
  return response->body;
}

Result<json> ReadJobView(const JobSource& source, double timeout_s) {
  auto text = ReadJobViewText(source, timeout_s);
  if (!text.ok()) return text.error();
  return ParseJobView(*text, source.Describe());
}

Result<json> ParseJobView(const std::string& text, const std::string& where) {
  std::optional<json> parsed = json_fields::ParseObject(text, kMaxViewBytes);
  if (!parsed) {
    return UnavailableError(where + " is not JSON", "a job view is written whole (replaced atomically); is this a job.json?");
  }
  json& view = *parsed;
  auto format = view.find("format");
  if (format == view.end() || !format->is_string() || *format != kFormat) {
    std::string found = format == view.end() ? "no \"format\"" : "format " + format->dump();
    return UnavailableError(where + " is not a job view (" + found + ", expected \"" + kFormat + "\")",
                            "this primus-cli reads the view of docs/monitor.md; is the agent of another version?");
  }
  // A view that says the job runs, written by an agent of this host that is
  // gone: it ended without writing its end.
  if (view["job"].is_object()) {
    std::string state = json_fields::Text(view["job"], "state");
    std::optional<ProcessStamp> agent = StampFromJson(json_fields::Object(view["job"], "agent"));
    if (!telemetry::IsEndedJobState(state) && agent && CheckAlive(*agent) == Liveness::kGone) {
      view["job"]["state"] = kEndedWithoutRecord;
    }
  }
  return view;
}

}  // namespace primus::monitor
