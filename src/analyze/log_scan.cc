#include "analyze/log_scan.h"

#include <dirent.h>
#include <re2/re2.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <tuple>

#include "analyze/log_line.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

constexpr size_t kUnrecognisedPerRank = 3;

bool IsLogName(const std::string& name) {
  for (const char* ending : {".log", ".out", ".err", ".txt"}) {
    if (name.ends_with(ending)) return true;
  }
  return false;
}

void Collect(const std::string& dir, const std::string& shown, std::vector<LogSource>* sources) {
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return;
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(handle);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string path = JoinPath(dir, name);
    std::string display = shown.empty() ? name : JoinPath(shown, name);
    if (IsDirectory(path)) {
      if (name != "checkpoints") Collect(path, display, sources);
    } else if (IsLogName(name)) {
      sources->push_back({path, display, "", -1, -1});
    }
  }
}

// host, rank and attempt from "<dir>/attempt_<A>/<host>.rank<R>.log".
void Describe(LogSource* source) {
  std::string name = source->path.substr(source->path.rfind('/') + 1);
  std::string parent = DirName(source->path);
  parent = parent.substr(parent.rfind('/') + 1);
  if (parent.starts_with("attempt_")) {
    if (auto attempt = ParseInt(parent.substr(8))) source->attempt = static_cast<int>(*attempt);
  }
  size_t rank_at = name.rfind(".rank");
  if (rank_at != std::string::npos && name.ends_with(".log")) {
    if (auto rank = ParseInt(name.substr(rank_at + 5, name.size() - 4 - rank_at - 5))) {
      source->rank = static_cast<int>(*rank);
      source->host = name.substr(0, rank_at);
    }
  } else if (name.ends_with(".endings.log")) {
    source->host = name.substr(0, name.size() - 12);
  }
}

// Earlier time first; lines without a time after every timed line, in
// reading order.
bool Before(const Occurrence& a, size_t a_order, const Occurrence& b, size_t b_order) {
  double at = a.time > 0 ? a.time : std::numeric_limits<double>::infinity();
  double bt = b.time > 0 ? b.time : std::numeric_limits<double>::infinity();
  if (at != bt) return at < bt;
  return a_order < b_order;
}

template <typename T>
void InsertSorted(std::vector<T>* values, const T& value) {
  auto at = std::lower_bound(values->begin(), values->end(), value);
  if (at == values->end() || *at != value) values->insert(at, value);
}

}  // namespace

Result<std::vector<LogSource>> FindLogSources(const std::vector<std::string>& paths) {
  std::vector<LogSource> sources;
  for (const std::string& path : paths) {
    if (IsDirectory(path)) {
      Collect(path, "", &sources);
    } else if (PathExists(path)) {
      sources.push_back({path, path, "", -1, -1});
    } else {
      return UnavailableError(path + ": no such file or directory",
                              "name an experiment directory (output/<exp>_<time>), a log directory or log files");
    }
  }
  for (LogSource& source : sources) Describe(&source);
  return sources;
}

LogScan ScanLogs(const std::vector<LogSource>& sources, const SignatureDb& db, const ScanProgress& on_file) {
  static const RE2 error_looking(
      R"((?i)(traceback \(most recent call last\)|\berror\b|exception|\bfatal\b|segmentation fault|core dumped|\babort))");
  const std::vector<Signature>& signatures = db.signatures();
  LogScan scan;
  scan.files = sources.size();
  std::set<std::tuple<int, std::string, int>> ranks_with_hits;  // (attempt, host, rank)
  std::map<int, size_t> hit_index;  // signature -> index in scan.hits
  std::vector<size_t> hit_order;    // reading order of each hit's first occurrence
  std::map<std::tuple<int, std::string, int>, std::vector<Occurrence>> unknown;  // (attempt, host, rank)
  struct Candidate {
    Occurrence where;
    size_t order = 0;
    int signature = -1;
  };
  // Per attempt: the earliest fatal failure, the earliest symptom (severity
  // error: a peer's death seen from here), the earliest unexplained line.
  std::map<int, Candidate> fatal_first, symptom_first, unknown_first;
  size_t order = 0;
  LogLineParser parser;
  size_t files_done = 0;
  for (const LogSource& source : sources) {
    if (on_file) on_file(files_done++, sources.size(), source.path);
    std::ifstream in(source.path, std::ios::binary);
    std::string raw;
    size_t number = 0;
    while (std::getline(in, raw)) {
      ++number;
      ++order;
      LogLine line = parser.Parse(raw);
      std::vector<int> hits = db.Match(line.text);
      bool error_like = hits.empty() && RE2::PartialMatch(line.text, error_looking);
      if (hits.empty() && !error_like) continue;
      Occurrence occurrence{source.display, number,
                            line.host.empty() ? source.host : std::string(line.host),
                            line.rank >= 0 ? line.rank : source.rank, source.attempt, line.time,
                            std::string(Trim(line.text))};
      if (!hits.empty()) {
        int signature = hits.front();  // the most specific: entries are ordered so
        auto [at, inserted] = hit_index.emplace(signature, scan.hits.size());
        if (inserted) {
          scan.hits.push_back({signature, occurrence, 0, {}, {}});
          hit_order.push_back(order);
        }
        SignatureHit& hit = scan.hits[at->second];
        ++hit.count;
        if (Before(occurrence, order, hit.first, hit_order[at->second])) {
          hit.first = occurrence;
          hit_order[at->second] = order;
        }
        if (occurrence.rank >= 0) InsertSorted(&hit.ranks, occurrence.rank);
        if (signatures[signature].severity != Severity::kWarning) {
          ranks_with_hits.insert({occurrence.attempt, occurrence.host, occurrence.rank});
        }
        if (!occurrence.host.empty()) InsertSorted(&hit.hosts, occurrence.host);
        if (signatures[signature].severity != Severity::kWarning) {
          auto& firsts = signatures[signature].severity == Severity::kFatal ? fatal_first : symptom_first;
          auto [candidate, fresh] = firsts.emplace(occurrence.attempt, Candidate{occurrence, order, signature});
          if (!fresh && Before(occurrence, order, candidate->second.where, candidate->second.order)) {
            candidate->second = {occurrence, order, signature};
          }
        }
      } else {
        auto& lines = unknown[{occurrence.attempt, occurrence.host, occurrence.rank}];
        if (lines.size() < kUnrecognisedPerRank) lines.push_back(occurrence);
        auto [candidate, fresh] = unknown_first.emplace(occurrence.attempt, Candidate{occurrence, order, -1});
        if (!fresh && Before(occurrence, order, candidate->second.where, candidate->second.order)) {
          candidate->second = {occurrence, order, -1};
        }
      }
    }
    scan.lines += number;
  }
  if (on_file) on_file(sources.size(), sources.size(), "");
  // Hits by first occurrence.
  std::vector<size_t> index(scan.hits.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
    return Before(scan.hits[a].first, hit_order[a], scan.hits[b].first, hit_order[b]);
  });
  std::vector<SignatureHit> sorted;
  for (size_t i : index) sorted.push_back(scan.hits[i]);
  scan.hits = std::move(sorted);
  // Unrecognised lines only for ranks no signature explains.
  for (auto& [key, lines] : unknown) {
    bool explained = std::get<2>(key) >= 0 && ranks_with_hits.count(key) > 0;
    if (!explained) scan.unrecognised.insert(scan.unrecognised.end(), lines.begin(), lines.end());
  }
  // The first failure of each attempt: the earliest fatal one; a rank that
  // was SIGKILLed can only be seen by the agent a few milliseconds after its
  // peers already logged the broken connection, so a symptom never wins over
  // a cause. Without a fatal failure, the earliest symptom; then the earliest
  // unexplained error line.
  std::set<int> attempts;
  for (const auto* firsts : {&fatal_first, &symptom_first, &unknown_first}) {
    for (const auto& [attempt, candidate] : *firsts) attempts.insert(attempt);
  }
  for (int attempt : attempts) {
    for (const auto* firsts : {&fatal_first, &symptom_first, &unknown_first}) {
      auto found = firsts->find(attempt);
      if (found == firsts->end()) continue;
      scan.first_failures.push_back({attempt, found->second.where, found->second.signature});
      break;
    }
  }
  return scan;
}

}  // namespace primus::analyze
