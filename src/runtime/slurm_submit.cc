#include "runtime/slurm_submit.h"

#include <unistd.h>

#include <algorithm>

#include "io/subprocess.h"
#include "io/unique_fd.h"
#include "util/files.h"
#include "util/hostlist.h"
#include "util/private_files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

constexpr const char* kDirective = "#SBATCH ";
constexpr const char* kContinuationsFile = "continuations.txt";
constexpr size_t kMaxContinuationsBytes = 1 << 20;

bool IsJobId(std::string_view text) {
  return !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The words of a directive as sbatch reads them: '...' quotes and \x
// escapes undone (our directives never hold $'...': CheckDirectiveText).
std::vector<std::string> DirectiveWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '\'') quoted = false;
      else word += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// A directive's option ("--exclude", "-x") and its value ("" for a flag).
struct Directive {
  std::string option;
  std::string value;
};

Directive ParseDirective(std::string_view text) {
  std::vector<std::string> words = DirectiveWords(text);
  Directive directive;
  if (words.empty()) return directive;
  const std::string& first = words[0];
  if (first.starts_with("--")) {
    size_t equals = first.find('=');
    directive.option = first.substr(0, equals);
    if (equals != std::string::npos) directive.value = first.substr(equals + 1);
    else if (words.size() > 1) directive.value = words[1];
  } else if (first.starts_with("-") && first.size() >= 2) {
    directive.option = first.substr(0, 2);
    directive.value = first.size() > 2 ? first.substr(2) : (words.size() > 1 ? words[1] : "");
  }
  return directive;
}

bool Is(const Directive& directive, std::string_view long_name, std::string_view short_name) {
  return directive.option == long_name || directive.option == short_name;
}

void AddHosts(const std::vector<std::string>& hosts, std::vector<std::string>* to) {
  for (const std::string& host : hosts) {
    if (std::find(to->begin(), to->end(), host) == to->end()) to->push_back(host);
  }
}

}  // namespace

Result<std::string> SubmitHeldBatchJob(const std::string& script,
                                       const std::map<std::string, std::optional<std::string>>& env) {
  CommandOptions options;
  options.timeout_s = 120;
  options.stdin_data = script;
  options.env = env;
  auto submitted = RunCommand({"sbatch", "--parsable", "--hold"}, options);
  if (!submitted.ok()) return submitted.error();
  if (submitted->exit_code != 0) {
    return UnavailableError("sbatch refused the job:\n" + submitted->Tail(10),
                            "check the sbatch flags (partition, account, time, nodes); --dry-run shows the script");
  }
  std::string job_id(Trim(Split(Trim(submitted->out), ';').front()));
  if (!IsJobId(job_id)) {
    return UnavailableError("sbatch --parsable printed no job id: '" + std::string(Trim(submitted->out)) + "'");
  }
  return job_id;
}

Status ReleaseBatchJob(const std::string& job_id) {
  CommandOptions options;
  options.timeout_s = 60;
  auto released = RunCommand({"scontrol", "release", job_id}, options);
  if (released.ok() && released->exit_code == 0) return Status::Ok();
  return UnavailableError("scontrol release " + job_id + " failed" +
                          (released.ok() ? ": " + released->Tail(3) : ": " + released.error().message));
}

Result<BatchContinuation> FindBatchContinuation(const JobDirPlan& plan, const Environment& environment) {
  std::string job_id = Lookup(environment, "SLURM_JOB_ID").value_or("");
  if (!IsJobId(job_id)) return UnavailableError("not inside a Slurm job (no SLURM_JOB_ID)");
  if (Lookup(environment, "SLURM_ARRAY_JOB_ID")) {
    return UnavailableError("job " + job_id + " is a task of a job array, which cannot submit itself again alone");
  }
  BatchContinuation continuation;
  continuation.job_id = job_id;
  continuation.first_job_id = Lookup(environment, kFirstJobVariable).value_or(job_id);
  if (!IsJobId(continuation.first_job_id)) {
    return UnavailableError(std::string(kFirstJobVariable) + "='" + EscapeControlCharacters(continuation.first_job_id) +
                            "' is not a job id");
  }
  continuation.job_dir = plan.DirFor(continuation.first_job_id);
  if (Status ours = CheckPrivateDir(continuation.job_dir); !ours.ok()) {
    return UnavailableError("job " + job_id + " was not submitted by primus-cli slurm sbatch (" + ours.error().message +
                            ")");
  }
  std::string script = continuation.first_job_id == job_id ? "sbatch.sh" : "sbatch-" + job_id + ".sh";
  continuation.script_path = JoinPath(continuation.job_dir, script);
  if (!PathExists(continuation.script_path)) {
    return UnavailableError("job " + job_id + " was not submitted by primus-cli slurm sbatch (no " +
                            continuation.script_path + ")");
  }
  continuation.own_log_pattern = plan.LogPattern();
  continuation.log_pattern_in_dir = JoinPath(ReplaceAll(continuation.job_dir, "%", "%%"), "logs/slurm-%j.out");
  return continuation;
}

Result<std::string> ContinuationScript(std::string_view script, const BatchContinuation& continuation,
                                       const std::vector<std::string>& excluded, int restarts) {
  std::vector<std::string> lines = Split(script, '\n');
  if (!script.empty() && script.back() == '\n') lines.pop_back();
  std::vector<std::string> all_excluded;
  std::vector<std::string> out;
  size_t last_directive = 0;  // in `out`, the line after the last #SBATCH one
  bool in_header = true;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (in_header && i > 0 && !line.starts_with("#")) in_header = false;
    if (!in_header || !line.starts_with(kDirective)) {
      out.push_back(line);
      continue;
    }
    std::string_view text = std::string_view(line).substr(std::string_view(kDirective).size());
    Directive directive = ParseDirective(text);
    if (Is(directive, "--exclude", "-x")) {
      auto hosts = ExpandHostlist(directive.value);
      if (!hosts.ok()) return hosts.error();
      AddHosts(*hosts, &all_excluded);
      continue;  // one --exclude below names them all
    }
    if (Is(directive, "--dependency", "-d")) continue;  // met: this job ran
    if (Is(directive, "--nodelist", "-w")) {
      if (directive.value.find('/') != std::string::npos) continue;  // a file of hosts: Slurm's to read again
      auto hosts = ExpandHostlist(directive.value);
      if (!hosts.ok()) return hosts.error();
      std::vector<std::string> kept;
      for (const std::string& host : *hosts) {
        if (std::find(excluded.begin(), excluded.end(), host) == excluded.end()) kept.push_back(host);
      }
      if (kept.empty()) continue;
      out.push_back(kDirective + ("--nodelist=" + ShellQuote(Join(kept, ","))));
    } else if (Is(directive, "--output", "-o") && directive.value == continuation.own_log_pattern) {
      out.push_back(kDirective + ("--output=" + ShellQuote(continuation.log_pattern_in_dir)));
    } else {
      out.push_back(line);
    }
    last_directive = out.size();
  }
  if (last_directive == 0) return UnavailableError(continuation.script_path + " holds no #SBATCH line");
  AddHosts(excluded, &all_excluded);
  std::vector<std::string> added = {
      kDirective + ("--exclude=" + ShellQuote(Join(all_excluded, ","))),
      // A user's --output without %j names the first job's file too: add to it, never truncate it.
      std::string(kDirective) + "--open-mode=append",
      "# Continues job " + continuation.job_id +
          (continuation.first_job_id != continuation.job_id ? " (which continued job " + continuation.first_job_id + ")"
                                                            : "") +
          ", restart " + std::to_string(restarts) + ": " + EscapeControlCharacters(Join(excluded, ", ")) +
          " found bad and no spare node in its allocation (direct.exclude_bad_nodes).",
  };
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(last_directive), added.begin(), added.end());
  return Join(out, "\n") + "\n";
}

Result<std::string> SubmitContinuation(const BatchContinuation& continuation, const std::vector<std::string>& excluded,
                                       int restarts, const Environment& environment) {
  if (Status ours = CheckPrivateDir(continuation.job_dir); !ours.ok()) return ours.error();
  auto script = ReadRegularFile(continuation.script_path, 1 << 20);
  if (!script.ok()) return script.error();
  auto text = ContinuationScript(*script, continuation, excluded, restarts);
  if (!text.ok()) return text.error();

  std::map<std::string, std::optional<std::string>> env;
  for (const auto& [name, value] : environment) {
    if (name.starts_with("SLURM_") && name != "SLURM_CONF") env[name] = std::nullopt;  // this job's, not the next's
  }
  env[kFirstJobVariable] = continuation.first_job_id;
  env["PRIMUS_SCHEDULER_RESTARTS"] = std::to_string(restarts);
  if (!Lookup(environment, "PRIMUS_JOB_ID")) env["PRIMUS_JOB_ID"] = continuation.first_job_id;  // train's directory

  auto job_id = SubmitHeldBatchJob(*text, env);
  if (!job_id.ok()) return job_id.error();
  Status written = WriteFileAtomic(JoinPath(continuation.job_dir, "sbatch-" + *job_id + ".sh"), *text, 0700);
  if (written.ok()) written = ReleaseBatchJob(*job_id);
  // Recorded once it is sure to run (this job still runs, so sbatch --wait
  // reads the line when this one ends).
  if (written.ok()) {
    auto fd = OpenPrivateFileForAppend(JoinPath(continuation.job_dir, kContinuationsFile));
    if (!fd.ok()) {
      written = fd.error();
    } else {
      std::string line = continuation.job_id + " -> " + *job_id + " without " + Join(excluded, ",") + "\n";
      if (!io::WriteAll(*fd, line.data(), line.size())) {
        written = UnavailableError("cannot write " + JoinPath(continuation.job_dir, kContinuationsFile));
      }
      ::close(*fd);
    }
  }
  if (!written.ok()) {
    CommandOptions options;
    options.timeout_s = 60;
    (void)RunCommand({"scancel", *job_id}, options);  // it must not run unrecorded, nor sit held forever
    return Error{written.error().code, "job " + *job_id + " (the continuation) was cancelled: " +
                                           written.error().message, written.error().hint};
  }
  return *job_id;
}

std::optional<std::string> ContinuingJob(const std::string& job_dir, const std::string& job_id) {
  auto text = ReadRegularFile(JoinPath(job_dir, kContinuationsFile), kMaxContinuationsBytes);
  if (!text.ok()) return std::nullopt;
  for (std::string_view line : Split(*text, '\n')) {
    std::vector<std::string> words = Split(Trim(line), ' ');
    if (words.size() == 5 && words[0] == job_id && words[1] == "->" && IsJobId(words[2]) && words[3] == "without") {
      return words[2];
    }
  }
  return std::nullopt;
}

}  // namespace primus::runtime
