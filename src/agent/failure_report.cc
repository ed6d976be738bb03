#include "agent/failure_report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <optional>

#include "agent/line_stamp.h"
#include "analyze/signature_db.h"
#include "io/signal_channel.h"
#include "io/unique_fd.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

std::string Indent(const std::string& text, const std::string& indent) {
  std::string trimmed(text);
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  std::string out;
  for (const std::string& line : Split(trimmed, '\n')) out += indent + line + "\n";
  return out;
}

std::string Describe(const WorkerFailure& failure) {
  std::string pid = failure.pid > 0 ? fmt::format(", pid {}", failure.pid) : "";
  std::string local = failure.local_rank >= 0 ? std::to_string(failure.local_rank) : "?";
  return fmt::format("rank {} (local rank {}) on {}{}", failure.rank, local, failure.host, pid);
}

}  // namespace

bool FailedBefore(const WorkerFailure& a, const WorkerFailure& b) {
  double second_a = std::floor(a.timestamp), second_b = std::floor(b.timestamp);
  if (second_a != second_b) return second_a < second_b;
  return a.detected_at < b.detected_at;
}

size_t ChooseRootCause(const std::vector<WorkerFailure>& failures) {
  size_t best = 0;
  for (size_t i = 1; i < failures.size(); ++i) {
    if (FailedBefore(failures[i], failures[best])) best = i;
  }
  return best;
}

void PreferRankAsRootCause(int rank, const analyze::RankPlace* place, std::optional<WorkerFailure>* root,
                           std::vector<WorkerFailure>* others) {
  if (!*root || (*root)->rank == rank) return;
  for (WorkerFailure& other : *others) {
    if (other.rank == rank) {
      std::swap(**root, other);
      std::stable_sort(others->begin(), others->end(), FailedBefore);
      return;
    }
  }
  if (place == nullptr || place->rank != rank) return;
  WorkerFailure culprit;
  culprit.host = place->host;
  culprit.rank = rank;
  culprit.local_rank = place->local_rank;  // -1 when unknown: Describe says "?"
  culprit.attempt = (*root)->attempt;
  culprit.hung = true;
  culprit.timestamp = (*root)->timestamp;
  culprit.detected_at = (*root)->detected_at;
  others->insert(others->begin(), std::move(**root));
  *root = std::move(culprit);
}

std::string DescribeEnding(int exit_code, int signal) {
  if (signal != 0) return fmt::format("signal {} ({})", signal, io::SignalName(signal));
  return fmt::format("exit code {}", exit_code);
}

std::string FormatTimestamp(double seconds) {
  timespec when;
  when.tv_sec = static_cast<time_t>(std::floor(seconds));
  when.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  LineStamp stamp;
  return std::string(stamp.Format(when));
}

std::vector<std::string> LastLines(const std::string& path, size_t count) {
  io::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() || count == 0) return {};
  constexpr off_t kWindow = 64 * 1024;
  off_t size = ::lseek(fd.get(), 0, SEEK_END);
  off_t start = size > kWindow ? size - kWindow : 0;
  std::string text(static_cast<size_t>(size - start), '\0');
  ssize_t n = ::pread(fd.get(), text.data(), text.size(), start);
  if (n <= 0) return {};
  text.resize(static_cast<size_t>(n));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::vector<std::string> lines = Split(text, '\n');
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // cut mid-line
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<long>(count));
  for (std::string& line : lines) {
    if (line.size() > 1000) line = line.substr(0, 1000) + " ...(" + std::to_string(line.size()) + " bytes)";
  }
  return lines;
}

namespace {

// The first fatal (else error, else warning) signature of analyze logs'
// database that the root cause's own words match: its message, its
// traceback, the end of its log.
std::optional<analyze::Signature> MatchedSignature(const WorkerFailure& root, const std::vector<std::string>& tail) {
  std::vector<std::string> lines = Split(root.message + "\n" + root.traceback, '\n');
  lines.insert(lines.end(), tail.begin(), tail.end());
  return analyze::StrongestSignature(lines);
}

// The log's last lines without the traceback the banner already shows from
// the error file: what the worker printed before it.
std::vector<std::string> WithoutTraceback(std::vector<std::string> tail, const std::string& traceback) {
  if (traceback.empty()) return tail;
  for (size_t i = tail.size(); i-- > 0;) {
    if (tail[i].find("Traceback (most recent call last):") != std::string::npos) {
      tail.erase(tail.begin() + static_cast<std::ptrdiff_t>(i), tail.end());
      break;
    }
  }
  return tail;
}

}  // namespace

std::string FormatFailureBanner(const BannerInput& input) {
  const WorkerFailure& root = input.root_cause;
  std::string rule(78, '=');
  std::string out = rule + "\n";
  if (root.hung && root.pid == 0) {
    // The hang's culprit, named by the stacks though its node saw it fail in no way of its own.
    out += fmt::format("Root cause: {} hung: the other ranks wait for it; stopped with the job\n", Describe(root));
  } else if (root.hung) {
    // A node's early report comes before its worker was stopped: no ending yet.
    bool ended = root.exit_code != 0 || root.signal != 0;
    out += fmt::format("Root cause: {} hung: no output and no heartbeat for {:g} s; stopped by the agent{}\n",
                       Describe(root), root.hang_timeout_s > 0 ? root.hang_timeout_s : input.hang_timeout_s,
                       ended ? " (" + DescribeEnding(root.exit_code, root.signal) + ")" : "");
  } else {
    out += fmt::format("Root cause: {} failed with {}\n", Describe(root),
                       DescribeEnding(root.exit_code, root.signal));
  }
  if (!input.hang_verdict.empty()) out += "  waiting on: " + input.hang_verdict + "\n";
  for (const std::string& line : input.hang_details) out += "    " + line + "\n";
  out += fmt::format("  time:       {}{}\n", FormatTimestamp(root.timestamp),
                     root.error_file.empty() ? " (detected by the agent)" : " (from its error file)");
  if (root.attempt > 0) out += fmt::format("  attempt:    {}\n", root.attempt);
  if (!root.error_file.empty()) {
    out += fmt::format("  error file: {}\n", root.error_file);
    if (!root.message.empty()) out += fmt::format("  message:    {}\n", root.message);
    if (!root.traceback.empty()) out += "  traceback:\n" + Indent(root.traceback, "    ");
  }
  std::vector<std::string> full_tail =
      root.log_tail.empty() ? LastLines(root.log_file, input.tail_lines) : root.log_tail;
  if (std::optional<analyze::Signature> signature = MatchedSignature(root, full_tail)) {
    out += fmt::format("  signature:  {} ({}): {}\n", signature->id, analyze::SeverityName(signature->severity),
                       signature->meaning);
    out += fmt::format("  fix:        {}\n", signature->fix);
  }
  // The traceback once: from the error file above, not again in the log's tail.
  std::vector<std::string> tail = WithoutTraceback(full_tail, root.traceback);
  bool tail_was_traceback = tail.empty() && !full_tail.empty();
  if (tail_was_traceback) {
    out += fmt::format("  log:        {} (it ends with the traceback above)\n", root.log_file);
  } else if (tail.empty() && root.log_file.empty()) {
    // none known: the culprit that node 0 named from its place alone
  } else if (tail.empty()) {
    out += fmt::format("  log:        {} (no output)\n", root.log_file);
  } else {
    out += fmt::format("  last {} lines of {}:\n", tail.size(), root.log_file);
    for (const std::string& line : tail) out += "    " + line + "\n";
  }
  if (!input.other_failures.empty()) {
    out += "Other failures:\n";
    for (const WorkerFailure& other : input.other_failures) {
      out += fmt::format("  {}: {}{} at {}{}\n", Describe(other),
                         other.hung ? "hung, " : "", DescribeEnding(other.exit_code, other.signal),
                         FormatTimestamp(other.timestamp),
                         other.message.empty() ? "" : " - " + other.message);
    }
  }
  if (!input.stopped_ranks.empty()) {
    out += "Stopped by the agent: rank" + std::string(input.stopped_ranks.size() > 1 ? "s " : " ") +
           JoinNumbers(input.stopped_ranks, ", ") + "\n";
  }
  // <log dir>/attempt_<n>/<host>.rank<R>.log: the run's log directory, for analyze.
  std::string attempt_dir = root.log_file.empty() ? "" : DirName(root.log_file);
  if (attempt_dir.find("/attempt_") != std::string::npos) {
    out += "Next: primus-cli analyze logs " + ShellQuote(DirName(attempt_dir)) + "\n";
  }
  out += rule + "\n";
  return out;
}

}  // namespace primus::agent
