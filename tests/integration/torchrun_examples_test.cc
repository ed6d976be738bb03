// pytorch/examples' own DDP scripts, launched with the command lines
// upstream writes for them, side by side under Debian's real torchrun (torch
// 1.13, through tests/tools/torchrun_compat.py) and under our `torchrun`
// link: distributed/ddp/example.py through run_example.sh and through its
// README's line, ddp-tutorial-series/multigpu_torchrun.py with the
// tutorial's --standalone line (and its resume from the snapshot it wrote),
// and multinode.py with slurm/sbatch_run.sh submitted to a real two-node
// Slurm cluster (tests/support/slurm_cluster.h), where both agents meet
// through the c10d rendezvous on the head node without --node-rank.
//
// The scripts are not kept in this repository: the test reads them from a
// checkout of github.com/pytorch/examples named by PYTORCH_EXAMPLES_DIR (a
// work tree or a git directory holding the pinned commit), checks each
// file's git blob id against that commit, and writes CPU copies that differ
// only in device and backend lines (kChanges below; the list and the
// substitutions of the command lines are in
// tests/data/pytorch-examples/README.md). Without PYTORCH_EXAMPLES_DIR they
// come from the pinned archive in ../shared/upstream/; with neither, the
// tests skip.
//
// Each command line runs twice from the same directory (reset to the
// pristine copy before each run) and the same environment; `torchrun` on
// PATH is the compat wrapper the first time and our link the second. The
// test asserts: both exit 0; the same worker output lines (our "[host:rank] "
// prefix stripped; torchrun's workers share one stdout, where print()'s text
// and newline are separate writes and lines interleave, so torchrun's output
// must decompose into exactly our lines); the worker environment key by key
// (recorded by tests/workers/env_dump_site/sitecustomize.py on PYTHONPATH,
// which leaves the scripts untouched), with only the differences
// docs/torchrun.md documents and, per command line, the values that are
// that differ by design (free ports, generated ids); and the snapshot files the
// scripts write. Real torch, seconds each: label slow.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "processes.h"
#include "run_process.h"
#include "worker_variables.h"
#include "upstream_archive.h"
#include "slurm_cluster.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

namespace fs = std::filesystem;
using testing::WaitFor;
using testing::ProcessesWithMarker;
using testing::ReadOrEmpty;
using testing::SecondsSince;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunProcess;
using testing::SlurmCluster;
using Clock = std::chrono::steady_clock;

const std::string kSource = PRIMUS_SOURCE_DIR;
const std::string kPython = "/usr/bin/python3";

// github.com/pytorch/examples, 2025-08-25 ("silence destroy_proces_group() warning (#1387)").
const std::string kCommit = "77f55b912142e11fcfdf5b530231fb9c52f181e8";

struct UpstreamFile {
  std::string path;
  std::string blob;  // `git ls-tree <kCommit> <path>`
};
const std::vector<UpstreamFile> kFiles = {
    {"LICENSE", "1ba2484d4697a92afd0bf6be291eca930315534c"},
    {"distributed/ddp/example.py", "d64b4739769e3c36cc5522605edd43582895b59b"},
    {"distributed/ddp/run_example.sh", "d439b681b4785e3ce0ec9deca6f2cbbfc35c6d22"},
    {"distributed/ddp/README.md", "4f110affe63f20c6c619d451314c3e6261580c39"},
    {"distributed/ddp-tutorial-series/datautils.py", "22c364eaa0d36bdcb5726f9f23972fe6b5d50615"},
    {"distributed/ddp-tutorial-series/multigpu_torchrun.py", "32d6254d2dc43b104655bb7aec41a00b492e8dc4"},
    {"distributed/ddp-tutorial-series/multinode.py", "2cbae84b56ce2e11a657d2678facd3bfeaed41c0"},
    {"distributed/ddp-tutorial-series/slurm/sbatch_run.sh", "ac02d19e994403743584d87dd05ef3b43e4329c8"},
};

// The CPU copies: each `from` line (whole, indentation included) must occur
// exactly once in its file; `to` replaces it, nullptr drops it. Nothing else
// changes.
struct Change {
  std::string path;
  std::string from;
  const char* to;
};
const std::string kTutorial = "distributed/ddp-tutorial-series/";
const std::vector<Change> kChanges = {
    // ddp/example.py: torch.accelerator (torch >= 2.6) and the device index.
    {"distributed/ddp/example.py", "    has_gpu = torch.accelerator.is_available()", "    has_gpu = True"},
    {"distributed/ddp/example.py", "    gpu_count = torch.accelerator.device_count()", "    gpu_count = min_gpus"},
    {"distributed/ddp/example.py", "    model = ToyModel().to(rank)", "    model = ToyModel().to(\"cpu\")"},
    {"distributed/ddp/example.py", "    ddp_model = DDP(model, device_ids=[rank])", "    ddp_model = DDP(model)"},
    {"distributed/ddp/example.py", "    labels = torch.randn(20, 5).to(rank)",
     "    labels = torch.randn(20, 5).to(\"cpu\")"},
    {"distributed/ddp/example.py", "        acc = torch.accelerator.current_accelerator()",
     "        acc = torch.device(\"cpu\")"},
    {"distributed/ddp/example.py", "        backend = torch.distributed.get_default_backend_for_device(acc)",
     "        backend = \"gloo\""},
    {"distributed/ddp/example.py", "        torch.accelerator.set_device_index(rank)", nullptr},
    // multigpu_torchrun.py: nccl -> gloo, the GPU -> cpu.
    {kTutorial + "multigpu_torchrun.py", "    torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))", nullptr},
    {kTutorial + "multigpu_torchrun.py", "    init_process_group(backend=\"nccl\")",
     "    init_process_group(backend=\"gloo\")"},
    {kTutorial + "multigpu_torchrun.py", "        self.model = model.to(self.gpu_id)",
     "        self.model = model.to(\"cpu\")"},
    {kTutorial + "multigpu_torchrun.py", "        self.model = DDP(self.model, device_ids=[self.gpu_id])",
     "        self.model = DDP(self.model)"},
    {kTutorial + "multigpu_torchrun.py", "        loc = f\"cuda:{self.gpu_id}\"", "        loc = \"cpu\""},
    {kTutorial + "multigpu_torchrun.py", "            source = source.to(self.gpu_id)",
     "            source = source.to(\"cpu\")"},
    {kTutorial + "multigpu_torchrun.py", "            targets = targets.to(self.gpu_id)",
     "            targets = targets.to(\"cpu\")"},
    // multinode.py: the same lines with local_rank.
    {kTutorial + "multinode.py", "    torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))", nullptr},
    {kTutorial + "multinode.py", "    init_process_group(backend=\"nccl\")",
     "    init_process_group(backend=\"gloo\")"},
    {kTutorial + "multinode.py", "        self.model = model.to(self.local_rank)",
     "        self.model = model.to(\"cpu\")"},
    {kTutorial + "multinode.py", "        self.model = DDP(self.model, device_ids=[self.local_rank])",
     "        self.model = DDP(self.model)"},
    {kTutorial + "multinode.py", "        loc = f\"cuda:{self.local_rank}\"", "        loc = \"cpu\""},
    {kTutorial + "multinode.py", "            source = source.to(self.local_rank)",
     "            source = source.to(\"cpu\")"},
    {kTutorial + "multinode.py", "            targets = targets.to(self.local_rank)",
     "            targets = targets.to(\"cpu\")"},
    // slurm/sbatch_run.sh: no GPUs on this cluster; 2 nodes instead of 4
    // (#SBATCH --nodes/--ntasks/--cpus-per-task are overridden on sbatch's
    // command line instead); the script path: upstream's names a file of
    // their cluster (/shared/examples/multinode_torchrun.py, which this tree
    // does not have), here multinode.py beside the batch script. The
    // arguments `50 10` stay; --batch_size 512 (the script's own flag) makes
    // an epoch one step.
    {kTutorial + "slurm/sbatch_run.sh", "#SBATCH --gpus-per-task=1", nullptr},
    {kTutorial + "slurm/sbatch_run.sh", "--nnodes 4 \\", "--nnodes 2 \\"},
    {kTutorial + "slurm/sbatch_run.sh", "/shared/examples/multinode_torchrun.py 50 10",
     "multinode.py 50 10 --batch_size 512"},
};

// A file of the pinned commit from the checkout at `root`: through git when
// `root` is a repository holding the commit, else from the work tree; ""
// with *error set when it is missing or not the pinned version.
std::string UpstreamText(const std::string& root, const UpstreamFile& file, const std::string& scratch,
                         std::string* error) {
  ProcessResult shown = RunProcess({"git", "-C", root, "show", kCommit + ":" + file.path});
  std::string text = shown.exit_code == 0 ? shown.out : ReadOrEmpty(root + "/" + file.path);
  std::string copy = scratch + "/blob";
  if (!WriteFileAtomic(copy, text).ok()) {
    *error = "cannot write " + copy;
    return "";
  }
  std::string blob(Trim(RunProcess({"git", "hash-object", copy}).out));
  if (blob != file.blob) {
    *error = file.path + " in " + root + " is not pytorch/examples " + kCommit + "'s (blob " + blob + ", want " +
             file.blob + ")";
    return "";
  }
  return text;
}

// The CPU copy of one upstream file (kChanges applied); "" with *error set
// when a line to change is not there exactly once.
std::string CpuCopy(const std::string& path, const std::string& text, std::string* error) {
  std::vector<std::string> lines = Split(text, '\n');
  for (const Change& change : kChanges) {
    if (change.path != path) continue;
    auto count = std::count(lines.begin(), lines.end(), change.from);
    if (count != 1) {
      *error = path + ": the line `" + change.from + "` occurs " + std::to_string(count) + " times";
      return "";
    }
    auto at = std::find(lines.begin(), lines.end(), change.from);
    if (change.to == nullptr) lines.erase(at);
    else *at = change.to;
  }
  return Join(lines, "\n");
}

// Our console prefix, "[host:rank] ".
const std::regex kOurPrefix(R"(^\[[A-Za-z0-9_.-]+:[0-9]+\] )");
// What changes from run to run in the scripts' own lines: example.py prints its pid.
const std::regex kPid(R"(\[[0-9]+\])");

// Our stdout's lines, prefix stripped (lines without one are the shell
// script's own, such as run_example.sh's echo).
std::vector<std::string> OurLines(const std::string& out) {
  std::vector<std::string> lines = Split(out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (std::string& line : lines) {
    line = std::regex_replace(line, kOurPrefix, "", std::regex_constants::format_first_only);
  }
  return lines;
}

// "" when torchrun's output consists of exactly `lines` (any order; the
// workers' writes interleaved), else what does not fit.
std::string Mismatch(std::string theirs, std::vector<std::string> lines) {
  std::string problems;
  size_t newlines = static_cast<size_t>(std::count(theirs.begin(), theirs.end(), '\n'));
  if (newlines != lines.size()) {
    problems += "torchrun printed " + std::to_string(newlines) + " lines, we " + std::to_string(lines.size()) + "\n";
  }
  std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& line : lines) {
    if (line.empty()) continue;
    size_t at = theirs.find(line);
    if (at == std::string::npos) {
      problems += "only ours: " + line + "\n";
      continue;
    }
    theirs.replace(at, line.size(), "\x01");
  }
  std::string rest;
  for (const std::string& piece : Split(theirs, '\n')) {
    std::string left = ReplaceAll(piece, "\x01", "");
    if (!Trim(left).empty()) rest += "only torchrun's: " + left + "\n";
  }
  return problems + rest;
}

// One launch: its result, how long it took, each rank's environment, and
// the files in the work directory afterwards.
struct Outcome {
  std::string launcher;
  ProcessResult result;
  double seconds = 0;
  std::map<int, std::map<std::string, std::string>> env;
  std::set<std::string> files;
};

class TorchrunExamplesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (RunProcess({kPython, "-c", "import torch.distributed.run"}).exit_code != 0) {
      skip_ = kPython + " has no torch.distributed.run";
      return;
    }
    // PYTORCH_EXAMPLES_DIR, else the pinned archive of ../shared/upstream/.
    const char* given = std::getenv("PYTORCH_EXAMPLES_DIR");
    examples_ = new testing::TempDir();
    std::string root;
    if (given != nullptr && *given != '\0') {
      root = given;
    } else {
      unpacked_ = new testing::TempDir();
      auto tree = testing::UnpackUpstream("pytorch-examples-77f55b9.tar.gz", unpacked_->path());
      if (!tree.ok()) {
        skip_ = tree.error().message + ", and PYTORCH_EXAMPLES_DIR is not set (a checkout of "
                "github.com/pytorch/examples with commit " + kCommit + "; tests/data/pytorch-examples/README.md)";
        return;
      }
      root = *tree;
    }
    for (const UpstreamFile& file : kFiles) {
      std::string text = UpstreamText(root, file, examples_->path(), &setup_error_);
      if (!setup_error_.empty()) return;
      std::string copy = CpuCopy(file.path, text, &setup_error_);
      if (!setup_error_.empty()) return;
      examples_->Write(file.path, copy);
    }
    ::unlink((examples_->path() + "/blob").c_str());
  }
  static void TearDownTestSuite() {
    delete examples_;
    examples_ = nullptr;
    delete unpacked_;
    unpacked_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    marker_ = "torchrun-examples-" + std::to_string(getpid()) + "-" + std::to_string(++counter_);
    work_ = dir_.path() + "/work";
    dump_ = dir_.path() + "/env";
    ASSERT_TRUE(MakeDirs(dir_.path() + "/bin").ok());
    ASSERT_TRUE(MakeDirs(dir_.path() + "/tmp").ok());
  }
  void TearDown() override {
    for (pid_t pid : ProcessesWithMarker(marker_)) kill(pid, SIGKILL);
  }

  // `torchrun` on PATH: torch 1.13's through the compat wrapper, or our link.
  void UseLauncher(bool theirs) {
    std::string link = dir_.path() + "/bin/torchrun";
    ::unlink(link.c_str());
    if (theirs) {
      ASSERT_TRUE(WriteFileAtomic(link, "#!/bin/sh\nexec " + kPython + " " + kSource +
                                            "/tests/tools/torchrun_compat.py \"$@\"\n",
                                  0755)
                      .ok());
    } else {
      ASSERT_EQ(::symlink((fs::path(PRIMUS_BINARY).parent_path() / "torchrun").c_str(), link.c_str()), 0);
    }
  }
  // The environment both launchers get.
  ProcessOptions Options(const std::map<std::string, std::optional<std::string>>& extra = {}) const {
    ProcessOptions options;
    options.cwd = work_;
    options.timeout_s = 120;
    options.clear_env = true;
    options.env = {{"PATH", dir_.path() + "/bin:/usr/bin:/bin"},
                   {"HOME", dir_.path()},
                   {"LANG", "C.UTF-8"},
                   {"PYTHONPATH", kSource + "/tests/workers/env_dump_site"},
                   {"EXAMPLES_ENV_DUMP", dump_},
                   {"PRIMUS_DIRECT_LOG_DIR", dir_.path() + "/primus-logs"},
                   {"TMPDIR", dir_.path() + "/tmp"},  // torchrun's log directories
                   {"PRIMUS_TEST_MARKER", marker_}};
    for (const auto& [key, value] : extra) options.env[key] = value;
    return options;
  }
  // The command line as a user's shell runs it: `torchrun` (or `bash`) found
  // on the PATH above.
  ProcessResult Shell(const std::vector<std::string>& argv) const {
    return RunProcess({"/bin/sh", "-c", ShellJoin(argv)}, Options());
  }
  // The work directory as the copy of upstream's `subdir` has it.
  void ResetWork(const std::string& subdir) {
    fs::remove_all(work_);
    fs::copy(examples_->path() + "/" + subdir, work_, fs::copy_options::recursive);
  }
  // One launch of `launch()` with torchrun 1.13 (`theirs`) or ours, from a
  // fresh copy of `subdir` unless `keep` (then the files of the run before
  // stay, as a user's would).
  template <typename Fn>
  Outcome One(bool theirs, const std::string& subdir, Fn launch, bool keep = false) {
    Outcome run;
    run.launcher = theirs ? "torchrun 1.13" : "ours";
    UseLauncher(theirs);
    if (!keep) ResetWork(subdir);
    fs::remove_all(dump_);
    fs::create_directories(dump_);
    auto started = Clock::now();
    run.result = launch();
    run.seconds = SecondsSince(started);
    for (const auto& entry : fs::directory_iterator(dump_)) {
      std::string name = entry.path().filename();  // env.<rank>.json
      if (!name.starts_with("env.") || !name.ends_with(".json")) continue;
      auto rank = ParseInt(name.substr(4, name.size() - 4 - 5));
      if (!rank) continue;
      run.env[static_cast<int>(*rank)] =
          nlohmann::json::parse(ReadOrEmpty(entry.path())).get<std::map<std::string, std::string>>();
    }
    for (const auto& entry : fs::directory_iterator(work_)) run.files.insert(entry.path().filename());
    return run;
  }
  // The same launch with torchrun 1.13, then with ours.
  template <typename Fn>
  std::pair<Outcome, Outcome> Both(const std::string& what, const std::string& subdir, Fn launch) {
    Outcome theirs = One(true, subdir, launch);
    Outcome ours = One(false, subdir, launch);
    if (std::getenv("TORCHRUN_EXAMPLES_SHOW") != nullptr) {  // both runs' output, for a person reading along
      for (const Outcome* run : {&theirs, &ours}) {
        std::cerr << "==== " << what << ", " << run->launcher << ": stdout\n"
                  << run->result.out << "==== stderr\n" << run->result.err;
      }
    }
    std::cerr << "[" << what << ": torchrun 1.13 " << theirs.seconds << " s, ours " << ours.seconds << " s]\n";
    return {theirs, ours};
  }
  std::pair<Outcome, Outcome> BothArgv(const std::string& what, const std::string& subdir,
                                       const std::vector<std::string>& argv) {
    return Both(what, subdir, [&] { return Shell(argv); });
  }

  // Both exited 0 with the same worker lines (pids, and the values of
  // `differing` keys as the scripts print them, normalised).
  void ExpectSameOutput(const Outcome& theirs, const Outcome& ours, const std::set<std::string>& differing = {}) {
    ASSERT_EQ(theirs.result.exit_code, 0) << theirs.result.all();
    ASSERT_EQ(ours.result.exit_code, 0) << ours.result.all();
    auto normalise = [&](const Outcome& run, const std::string& text) {
      std::string result = std::regex_replace(text, kPid, "[PID]");
      for (const std::string& key : differing) {
        if (run.env.empty() || !run.env.begin()->second.count(key)) continue;
        result = ReplaceAll(result, "'" + key + "': '" + run.env.begin()->second.at(key) + "'",
                            "'" + key + "': '<" + key + ">'");
      }
      return result;
    };
    std::vector<std::string> lines = OurLines(normalise(ours, ours.result.out));
    EXPECT_EQ(Mismatch(normalise(theirs, theirs.result.out), lines), "")
        << "torchrun 1.13:\n" << theirs.result.out << "\n---- ours:\n" << ours.result.out;
    // The workers' stderr: ours behind the prefix; each such line is in torchrun's too.
    std::string their_err = normalise(theirs, theirs.result.err);
    for (const std::string& line : Split(normalise(ours, ours.result.err), '\n')) {
      std::smatch match;
      if (!std::regex_search(line, match, kOurPrefix)) continue;
      std::string text = match.suffix();
      EXPECT_NE(their_err.find(text), std::string::npos) << "worker stderr only ours: " << line;
    }
    for (const Outcome* run : {&theirs, &ours}) {
      EXPECT_EQ(run->result.all().find("Traceback"), std::string::npos) << run->launcher << "\n" << run->result.all();
    }
  }

  // The environment, key by key: every variable torchrun sets has the same
  // value in ours, except `differing` ones (free ports, generated ids), which
  // must then at least agree across the run's ranks; what else differs is
  // what docs/torchrun.md documents.
  void ExpectSameEnvironment(const Outcome& theirs, const Outcome& ours, size_t ranks,
                             const std::set<std::string>& differing = {},
                             const std::string& ignored_prefix = "") {
    ASSERT_EQ(theirs.env.size(), ranks) << "torchrun's workers' environment files";
    ASSERT_EQ(ours.env.size(), ranks) << "our workers' environment files";
    const std::vector<std::string> torchrun_keys = {
        "RANK",        "LOCAL_RANK",          "WORLD_SIZE",   "LOCAL_WORLD_SIZE",          "GROUP_RANK",
        "GROUP_WORLD_SIZE", "ROLE_RANK",      "ROLE_NAME",    "ROLE_WORLD_SIZE",           "MASTER_ADDR",
        "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RESTART_COUNT",
        "TORCHELASTIC_USE_AGENT_STORE",       "TORCHELASTIC_ERROR_FILE"};
    // OMP_NUM_THREADS only where a node runs several workers: the loops
    // below compare it (and whatever else either sets) where it is set.
    const std::set<std::string> only_theirs = {"NCCL_ASYNC_ERROR_HANDLING"};  // torch < 2.2's name
    // PYTHONPATH: the stack dumper's directory first, then the same entries (docs/agent.md).
    std::set<std::string> documented = {"TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_USE_AGENT_STORE", "PYTHONPATH"};
    std::set<std::string> only_ours = testing::VariablesOnlyOurs();
    // And this host's environment plan, which `info --json` shows.
    ProcessOptions info_options = Options();
    ProcessResult info = RunProcess({PRIMUS_BINARY, "info", "--json"}, info_options);
    ASSERT_EQ(info.exit_code, 0) << info.err;
    nlohmann::json planned = nlohmann::json::parse(info.out)["env"];
    ASSERT_FALSE(planned.empty()) << info.out;
    for (const auto& [key, entry] : planned.items()) only_ours.insert(key);
    for (const auto& [rank, t] : theirs.env) {
      SCOPED_TRACE("rank " + std::to_string(rank));
      ASSERT_TRUE(ours.env.count(rank));
      const auto& o = ours.env.at(rank);
      for (const std::string& key : torchrun_keys) {
        ASSERT_TRUE(t.count(key)) << key << " not set by torchrun";
        ASSERT_TRUE(o.count(key)) << key << " not set by us";
        if (differing.count(key)) {
          EXPECT_FALSE(o.at(key).empty()) << key;
          EXPECT_EQ(o.at(key), ours.env.begin()->second.at(key)) << key << " differs between our ranks";
          EXPECT_EQ(t.at(key), theirs.env.begin()->second.at(key)) << key << " differs between torchrun's ranks";
        } else if (!documented.count(key)) {
          EXPECT_EQ(t.at(key), o.at(key)) << key;
        }
      }
      for (const auto& [key, value] : t) {
        if (!ignored_prefix.empty() && key.starts_with(ignored_prefix)) continue;
        if (!o.count(key)) {
          EXPECT_TRUE(only_theirs.count(key)) << key << " is set by torchrun only: " << value;
        } else if (o.at(key) != value) {
          EXPECT_TRUE(documented.count(key) || differing.count(key))
              << key << ": torchrun " << value << ", ours " << o.at(key);
          if (key == "PYTHONPATH") {
            EXPECT_TRUE(o.at(key).ends_with("/primus_stacks:" + value)) << "the user's entries follow ours: " << o.at(key);
          }
        }
      }
      for (const auto& [key, value] : o) {
        if (!ignored_prefix.empty() && key.starts_with(ignored_prefix)) continue;
        if (!t.count(key)) {
          EXPECT_TRUE(only_ours.count(key)) << key << " is set by us only: " << value;
        }
      }
    }
  }

  static inline testing::TempDir* examples_ = nullptr;
  static inline testing::TempDir* unpacked_ = nullptr;  // the pinned archive, unpacked
  static inline std::string skip_;
  static inline std::string setup_error_;
  static inline int counter_ = 0;
  testing::TempDir dir_;
  std::string marker_, work_, dump_;
};

// The comparison itself: torchrun's interleaved output decomposes into our
// lines, and a line either side lacks is named.
TEST(TorchrunExamplesOutput, InterleavedLinesDecomposeIntoOursAndMissingOnesAreNamed) {
  EXPECT_EQ(Mismatch("a 1\nb 2c 3\n\n", {"a 1", "c 3", "b 2"}), "");
  EXPECT_EQ(OurLines("[node1:0] a 1\nNode IP: x\n[h-2.x:13] [77] b\n"),
            (std::vector<std::string>{"a 1", "Node IP: x", "[77] b"}));
  std::string missing = Mismatch("a 1\nb 2\n", {"a 1", "b 3"});
  EXPECT_NE(missing.find("only ours: b 3"), std::string::npos) << missing;
  EXPECT_NE(missing.find("only torchrun's: b 2"), std::string::npos) << missing;
  EXPECT_NE(Mismatch("a 1\na 1\n", {"a 1"}), "");
  EXPECT_NE(Mismatch("a 1\n", {"a 1", "a 1"}), "");
}

// distributed/ddp/run_example.sh, run as upstream's run_distributed_examples.sh
// runs it: `bash run_example.sh example.py`, whose line is
// torchrun --nnodes=1 --nproc_per_node=2 --rdzv_id=101 --rdzv_endpoint="localhost:5972" example.py
TEST_F(TorchrunExamplesTest, DdpExampleThroughRunExampleSh) {
  auto [theirs, ours] = BothArgv("run_example.sh", "distributed/ddp", {"bash", "run_example.sh", "example.py"});
  ExpectSameOutput(theirs, ours);
  EXPECT_NE(ours.result.out.find("Launching example.py with 2 gpus"), std::string::npos) << ours.result.out;
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_NE(ours.result.out.find("] training completed in rank " + r + "!"), std::string::npos) << ours.result.out;
    EXPECT_NE(ours.result.out.find("Initializing process group with: {'MASTER_ADDR': 'localhost', 'MASTER_PORT': "
                                   "'5972', 'RANK': '" + r + "', 'LOCAL_RANK': '" + r +
                                   "', 'WORLD_SIZE': '2', 'LOCAL_WORLD_SIZE': '2'}"),
              std::string::npos)
        << ours.result.out;
  }
  ExpectSameEnvironment(theirs, ours, 2);
  EXPECT_EQ(ours.env.at(0).at("TORCHELASTIC_RUN_ID"), "101");
}

// distributed/ddp/README.md's line, `torchrun --nnodes=1 --nproc_per_node=8
// example.py`, with 2 processes for its 8 GPUs. No endpoint: torchrun's
// static default 127.0.0.1:29500, where ours takes a free port on one node
// (documented); example.py prints the port, normalised here.
TEST_F(TorchrunExamplesTest, DdpExampleThroughTheReadmeLine) {
  auto [theirs, ours] =
      BothArgv("ddp README line", "distributed/ddp", {"torchrun", "--nnodes=1", "--nproc_per_node=2", "example.py"});
  ExpectSameOutput(theirs, ours, {"MASTER_PORT"});
  ExpectSameEnvironment(theirs, ours, 2, {"MASTER_PORT", "TORCHELASTIC_RUN_ID"});
  EXPECT_EQ(theirs.env.at(0).at("MASTER_PORT"), "29500");
  EXPECT_EQ(theirs.env.at(0).at("TORCHELASTIC_RUN_ID"), "none");
  EXPECT_EQ(ours.env.at(0).at("MASTER_ADDR"), "127.0.0.1");
}

// ddp-tutorial-series/multigpu_torchrun.py with the tutorial's line
// (pytorch/tutorials, beginner_source/ddp_series_fault_tolerance.rst):
// torchrun --standalone --nproc_per_node=4 multigpu_torchrun.py 50 10
// with 2 processes for its 4 GPUs (2 cores here), plus the script's own
// --batch_size 512 (two steps an epoch). Rank 0 saves snapshot.pt every 10
// epochs; the same line again resumes from it, as the tutorial shows.
TEST_F(TorchrunExamplesTest, MultigpuTorchrunThroughTheTutorialLineAndItsResume) {
  const std::vector<std::string> line = {"torchrun", "--standalone", "--nproc_per_node=2", "multigpu_torchrun.py",
                                         "50",       "10",           "--batch_size",       "512"};
  const std::string subdir = "distributed/ddp-tutorial-series";
  auto launch = [&] { return Shell(line); };
  Outcome theirs = One(true, subdir, launch);
  Outcome theirs_resumed = One(true, subdir, launch, /*keep=*/true);
  Outcome ours = One(false, subdir, launch);
  Outcome ours_resumed = One(false, subdir, launch, /*keep=*/true);
  std::cerr << "[multigpu_torchrun.py: torchrun 1.13 " << theirs.seconds << " s, resumed " << theirs_resumed.seconds
            << " s; ours " << ours.seconds << " s, resumed " << ours_resumed.seconds << " s]\n";
  // --standalone: a free port and a generated run id in both; MASTER_ADDR
  // is torchrun's c10d host name for the agent (socket.getfqdn()), ours
  // 127.0.0.1.
  const std::set<std::string> differing = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "MASTER_ADDR"};
  for (auto [t, o] : {std::pair{&theirs, &ours}, std::pair{&theirs_resumed, &ours_resumed}}) {
    ExpectSameOutput(*t, *o);
    ExpectSameEnvironment(*t, *o, 2, differing);
    EXPECT_EQ(o->env.at(0).at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_TRUE(t->files.count("snapshot.pt")) << "torchrun's run left no snapshot.pt";
    EXPECT_TRUE(o->files.count("snapshot.pt")) << "our run left no snapshot.pt";
  }
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_NE(ours.result.out.find("] [GPU" + r + "] Epoch 49 | Batchsize: 512 | Steps: 2\n"), std::string::npos)
        << ours.result.out;
  }
  EXPECT_NE(ours.result.out.find("] Epoch 40 | Training snapshot saved at snapshot.pt\n"), std::string::npos)
      << ours.result.out;
  EXPECT_EQ(ours.result.out.find("Resuming"), std::string::npos) << ours.result.out;
  EXPECT_NE(ours_resumed.result.out.find("] Resuming training from snapshot at Epoch 40\n"), std::string::npos)
      << ours_resumed.result.out;
  EXPECT_EQ(ours_resumed.result.out.find("[GPU0] Epoch 39 "), std::string::npos) << ours_resumed.result.out;
}

// ddp-tutorial-series/slurm/sbatch_run.sh submitted to a two-node Slurm
// cluster (each node a network namespace with its own address and host
// name): its head_node_ip from `srun ... hostname --ip-address`, then
// srun torchrun --nnodes 2 --nproc_per_node 1 --rdzv_id $RANDOM --rdzv_backend c10d
//   --rdzv_endpoint $head_node_ip:29500 multinode.py 50 10 --batch_size 512
// on both nodes, with LOGLEVEL=INFO as the script exports it. No node
// ranks: the c10d rendezvous hands them out as the agents join.
TEST_F(TorchrunExamplesTest, MultinodeThroughSbatchRunShOnTwoSlurmNodes) {
  std::string unavailable = SlurmCluster::Unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << "no local Slurm cluster: " << unavailable;
  std::string error;
  auto started = Clock::now();
  std::unique_ptr<SlurmCluster> cluster = SlurmCluster::Start({}, &error);
  ASSERT_NE(cluster, nullptr) << error;
  double cluster_seconds = SecondsSince(started);
  std::map<std::string, std::optional<std::string>> cluster_env = cluster->Environment();
  std::string job_out = dir_.path() + "/job.out", job_err = dir_.path() + "/job.err";
  // sbatch, then wait for the job to leave the queue: its exit code from
  // scontrol, its output from the files.
  auto submit = [&]() {
    ProcessResult result;
    ::unlink(job_out.c_str());
    ::unlink(job_err.c_str());
    ProcessResult submitted = RunProcess({"sbatch", "--parsable", "--nodes=2", "--ntasks=2", "--cpus-per-task=2",
                                          "--output=" + job_out, "--error=" + job_err, "slurm/sbatch_run.sh"},
                                         Options(cluster_env));
    if (submitted.exit_code != 0) return submitted;
    std::string id = Split(Trim(submitted.out), ';')[0];
    bool gone = WaitFor([&] { return Trim(cluster->Client({"squeue", "-h", "-j", id}).out).empty(); }, 120);
    std::string job = cluster->Client({"scontrol", "show", "job", id}).out;
    if (!gone) cluster->Client({"scancel", id});
    result.exit_code = gone && job.find(" ExitCode=0:0") != std::string::npos ? 0 : 1;
    result.out = ReadOrEmpty(job_out);
    result.err = ReadOrEmpty(job_err);
    if (result.exit_code != 0) result.err += "\n==== scontrol show job\n" + job + "\n" + cluster->LogTails();
    return result;
  };
  auto [theirs, ours] = Both("multinode.py on 2 Slurm nodes", "distributed/ddp-tutorial-series", submit);
  std::cerr << "[slurm cluster started in " << cluster_seconds << " s]\n";
  // $RANDOM's run id and the master port each rendezvous picks; the
  // workers' MASTER_ADDR is torchrun's node-rank-0 agent's host name
  // (socket.getfqdn()), ours the endpoint's host as the script wrote it
  // (head_node_ip).
  const std::set<std::string> differing = {"TORCHELASTIC_RUN_ID", "MASTER_PORT", "MASTER_ADDR"};
  ExpectSameOutput(theirs, ours);
  ExpectSameEnvironment(theirs, ours, 2, differing, "SLURM");
  std::smatch head_node_ip;
  ASSERT_TRUE(std::regex_search(ours.result.out, head_node_ip, std::regex("Node IP: (10\\.[0-9.]+)\n")))
      << ours.result.out;
  EXPECT_EQ(ours.env.at(0).at("MASTER_ADDR"), head_node_ip[1].str());
  EXPECT_EQ(theirs.env.at(0).at("MASTER_ADDR"), theirs.env.at(0).at("SLURMD_NODENAME"));
  for (const Outcome* run : {&theirs, &ours}) {
    EXPECT_NE(run->result.out.find("Node IP: " + head_node_ip[1].str() + "\n"), std::string::npos) << run->result.out;
    EXPECT_TRUE(run->files.count("snapshot.pt")) << run->launcher << " left no snapshot.pt";
  }
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_NE(ours.result.out.find("] [GPU" + r + "] Epoch 49 | Batchsize: 512 | Steps: 2\n"), std::string::npos)
        << ours.result.out;
  }
}

}  // namespace
}  // namespace primus
