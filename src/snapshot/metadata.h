// metadata.json of an experiment directory: how the run was started (argv,
// working directory, git commit and dirty flag), where (hosts), when, and how
// it ended (status, exit code, restarts, root cause). Written when the launch
// starts (status "running") and rewritten when it ends, so a crash of the
// launcher itself still leaves a record: one that says "running" names its
// launcher, so a reader can tell it ended without finishing (StatusNow). Every string goes through the
// Redactor before it reaches the file, as data (Redactor::Json), so the file
// is valid JSON whatever a failure message quotes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/redaction.h"
#include "util/error.h"
#include "util/process_stamp.h"

namespace primus::snapshot {

struct GitState {
  std::string toplevel;
  std::string commit;
  bool dirty = false;
  // The uncommitted changes to tracked files (`git diff HEAD`): their hash,
  // which a replay compares, and the text itself (at most kMaxDiffBytes kept;
  // written to code/uncommitted.patch, never into metadata.json).
  std::string diff_sha256;
  std::string diff;
  bool diff_cut = false;  // the diff was longer than kMaxDiffBytes: `diff` holds its start
};
inline constexpr size_t kMaxDiffBytes = 1 << 20;

// The repository containing `dir`, when git is installed and it is one.
std::optional<GitState> DetectGit(const std::string& dir);

// A hook or patch that ran before the workers: where it was, its copy in the
// experiment directory (hooks/NN_<name>, what a replay runs), the copy's
// SHA-256, and what it printed for the launch.
struct RecordedScript {
  std::string kind;  // "hook" | "patch"
  std::string path;  // as found (relative to the working directory, or absolute)
  std::string copy;  // relative to the experiment directory
  std::string sha256;
  bool skipped = false;  // a patch that exited 2, or a run-once hook on another node
  std::map<std::string, std::string> env;  // its env. lines (secrets redacted when written)
  std::vector<std::string> extra_args;     // its extra. lines, as arguments
};

// A file the run depended on, by its hash: the entry script, the experiment files.
struct RecordedFile {
  std::string path;
  std::string sha256;
};

// How many nodes and workers a run had (what a replay must match).
struct RunLayout {
  int nnodes = 0;
  int nproc_per_node = 0;
  int world_size = 0;
};

struct RunMetadata {
  std::string primus_version;
  std::vector<std::string> argv;
  std::string cwd;
  std::optional<GitState> git;
  std::string task;                   // "train pretrain"
  std::vector<std::string> hosts;
  std::string start_time;             // ISO 8601, UTC
  std::string end_time;               // "" while running
  // running | succeeded | failed | interrupted | stuck_at_exit (the work
  // finished, but a worker had to be stopped in its teardown: exit code 6)
  std::string status = "running";
  int exit_code = -1;
  int restarts = 0;
  nlohmann::ordered_json root_cause;  // null, or the failing worker as the agent reported it
  // Each failed attempt's root cause, oldest first, as root_cause is: the
  // failure that caused each restart, and the last one's when the run
  // failed. Empty: none (not written).
  nlohmann::ordered_json failures = nlohmann::ordered_json::array();
  // direct.exclude_bad_nodes: [{host, reason}] of the nodes left out; empty: none (not written)
  nlohmann::ordered_json excluded_nodes = nlohmann::ordered_json::array();
  std::string replay_of;              // the experiment directory this run replays, if any
  // What reached the workers, so that a replay runs the same (written once
  // the worker command is known; absent in snapshots of older versions):
  std::vector<std::string> backend_args;  // the command line's, after the experiment
  std::vector<std::string> hook_args;     // what the hooks added (their extra. lines)
  std::vector<std::string> worker_argv;   // the command every rank ran
  std::optional<RunLayout> layout;
  std::vector<RecordedScript> scripts;  // in the order they ran
  std::vector<RecordedFile> code_files;  // the entry script (first), then the experiment files
  std::string log_dir;
  std::optional<ProcessStamp> launcher;  // who writes this record (util/process_stamp.h)
};

// The status as a reader should take it: "ended without a record" for a
// record that says "running" when its launcher, on this host, is gone
// (killed, or its disk filled before the end was written): kEndedWithoutRecord.
std::string StatusNow(const RunMetadata& metadata);

std::string IsoTimeUtc(double epoch_seconds);

nlohmann::ordered_json MetadataToJson(const RunMetadata& metadata, const Redactor& redactor);
// Never throws: fields of the wrong type read as absent (the file may be
// damaged or edited); a ConfigError only when it is not an object.
Result<RunMetadata> MetadataFromJson(const nlohmann::json& json);

Status WriteMetadata(const std::string& path, const RunMetadata& metadata, const Redactor& redactor);
Result<RunMetadata> ReadMetadata(const std::string& path);

// Pretty JSON written atomically.
Status WriteJsonFile(const std::string& path, const nlohmann::ordered_json& json);

}  // namespace primus::snapshot
