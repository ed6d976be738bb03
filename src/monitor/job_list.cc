#include "monitor/job_list.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "telemetry/job_view.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace primus::monitor {
namespace {

namespace jf = json_fields;


std::string LogDirOfView(const std::string& view_file) { return DirName(DirName(view_file)); }

std::string Listed(const std::vector<const JobEntry*>& jobs) {
  std::string out;
  for (const JobEntry* job : jobs) {
    out += fmt::format("\n    {}  {}  {}  (started in {})", job->run_id, job->state, job->What(),
                       job->cwd.empty() ? "?" : job->cwd);
  }
  return out;
}

}  // namespace

bool IsRunningView(const nlohmann::json& job, double modified, double now) {
  if (telemetry::IsEndedJobState(jf::Text(job, "state"))) return false;
  double interval = jf::Number(job, "interval_s").value_or(5);
  return now - modified <= std::max(60.0, 10 * interval);
}

std::string JobEntry::What() const {
  if (!experiment.empty()) return experiment;
  return command.empty() ? "?" : command;
}

nlohmann::json JobEntry::ToJson() const {
  nlohmann::json json{{"run_id", run_id},         {"state", state},       {"running", running},
                      {"log_dir", log_dir},       {"view_file", view_file}, {"nnodes", nnodes},
                      {"world_size", world_size}, {"restarts", restarts}, {"updated", updated},
                      {"agent_host", agent_host}, {"agent_pid", agent_pid}, {"hosts", hosts}};
  if (!experiment.empty()) json["experiment"] = experiment;
  if (!command.empty()) json["command"] = command;
  if (!cwd.empty()) json["cwd"] = cwd;
  if (started > 0) json["started"] = started;
  if (step) json["step"] = *step;
  if (total_steps) json["total_steps"] = *total_steps;
  if (eta_s) json["eta_s"] = *eta_s;
  if (loss) json["loss"] = *loss;
  return json;
}

std::vector<JobEntry> ListJobs(const SearchPlaces& places, double now) {
  std::vector<JobEntry> jobs;
  for (const std::string& path : JobViewFiles(places)) {
    JobEntry entry;
    int64_t modified_ns = 0;
    if (!IsOwnRegularFile(path, &modified_ns)) continue;  // a shared ./output holds others' too
    entry.updated = static_cast<double>(modified_ns) / 1e9;
    JobSource source;
    source.file = path;
    auto view = ReadJobView(source, 5);
    if (!view.ok()) continue;
    const nlohmann::json& job = jf::Object(*view, "job");
    entry.view_file = path;
    entry.log_dir = LogDirOfView(path);
    entry.run_id = jf::Text(job, "run_id");
    entry.state = jf::Text(job, "state");
    entry.experiment = EscapeControlCharacters(jf::Text(job, "experiment"));
    entry.command = EscapeControlCharacters(jf::Text(job, "command"));
    entry.cwd = jf::Text(job, "cwd");
    entry.nnodes = jf::IntegerIn(job, "nnodes", 1, 1 << 20).value_or(1);
    entry.world_size = jf::IntegerIn(job, "world_size", 1, 1 << 24).value_or(1);
    entry.restarts = jf::IntegerIn(job, "restarts", 0, 1 << 20).value_or(0);
    entry.started = jf::Number(job, "started").value_or(0);
    entry.step = jf::Integer(job, "step");
    entry.total_steps = jf::Integer(job, "total_steps");
    entry.eta_s = jf::Number(job, "eta_s");
    entry.loss = jf::Number(job, "loss");
    entry.agent_stamp = jf::Object(job, "agent");
    entry.agent_host = jf::Text(entry.agent_stamp, "host");
    entry.agent_pid = static_cast<pid_t>(jf::IntegerIn(entry.agent_stamp, "pid", 0, 1 << 30).value_or(0));
    for (const auto& node : jf::Array(*view, "nodes")) {
      std::string host = EscapeControlCharacters(jf::Text(node, "host")).substr(0, 255);
      if (!host.empty() && entry.hosts.size() < 4096) entry.hosts.push_back(std::move(host));
    }
    entry.running = IsRunningView(job, entry.updated, now);
    if (!entry.running && !telemetry::IsEndedJobState(entry.state)) entry.state = "gone";
    jobs.push_back(std::move(entry));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobEntry& a, const JobEntry& b) {
    double first = a.started > 0 ? a.started : a.updated, second = b.started > 0 ? b.started : b.updated;
    return first > second;
  });
  return jobs;
}

Result<JobEntry> ChooseJob(const std::vector<JobEntry>& jobs, const std::string& cwd, JobChoice choice) {
  bool or_latest = choice == JobChoice::kRunningOrLatest;
  std::vector<const JobEntry*> running, running_here;
  for (const JobEntry& job : jobs) {
    if (!job.running) continue;
    running.push_back(&job);
    if (job.cwd == cwd) running_here.push_back(&job);
  }
  const std::vector<const JobEntry*>& fit =
      running_here.empty() && choice != JobChoice::kRunningHere ? running : running_here;
  if (fit.size() == 1) return *fit.front();
  if (fit.size() > 1) {
    return UsageError(fmt::format("{} of your jobs are running{}; name one:{}", fit.size(),
                                  running_here.empty() ? "" : " from this directory", Listed(fit)),
                      "give its run id (the first column of primus-cli ps), its log or experiment directory");
  }
  if (or_latest) {
    for (const JobEntry& job : jobs) {
      if (job.cwd == cwd) return job;
    }
    if (!jobs.empty()) return jobs.front();
  }
  std::string what = or_latest                          ? "none of your jobs found on this host"
                     : choice == JobChoice::kRunningHere ? "none of your jobs started from this directory is running"
                                                         : "none of your jobs is running on this host";
  return UnavailableError(what, "primus-cli ps lists the jobs found; name one by its run id or directory");
}

Result<JobSource> ResolveJob(const std::string& target, const SearchPlaces& places, JobChoice choice) {
  if (!target.empty()) return ResolveTarget(target, places);
  auto chosen = ChooseJob(ListJobs(places, WallSeconds()), CurrentDir(), choice);
  if (!chosen.ok()) {
    if (chosen.error().code == ExitCode::kUsage) return chosen.error();
    return NoJobFound(chosen.error().message, places);
  }
  JobSource source;
  source.file = chosen->view_file;
  return source;
}

}  // namespace primus::monitor
