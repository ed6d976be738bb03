// Argument integrity through every runtime (issue 16 part 2; the fault
// matrix of part 6): a task argument holding a line break, CR, ESC, $(),
// backticks, quotes, a byte that is not UTF-8 or nothing at all reaches the
// workers byte for byte through direct, podman, a real Slurm cluster's srun
// and sbatch, and a Kubernetes manifest (containers and manifests carry
// text only: a byte that is not UTF-8 is refused there, never changed); nothing generated from it runs as
// shell code (the batch script's comment once ran `echo INJECTED` on the
// batch node); and what --dry-run prints cannot drive a terminal.
//
// The worker (tests/workers/write_argv.sh) writes its arguments NUL-separated
// to a file per rank, compared here with what was given.
// Direct, --dry-run and the manifest take milliseconds ("integration");
// Slurm and podman start real daemons and containers ("slow").
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include "container_engines.h"
#include "run_process.h"
#include "slurm_cluster.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

const std::string kWorkerSource = std::string(PRIMUS_SOURCE_DIR) + "/tests/workers/write_argv.sh";

// Each would do something visible (a file in `dir`) if any runtime let a
// shell read it as code.
std::vector<std::string> AwkwardArguments(const std::string& dir, bool utf8_only = false) {
  std::vector<std::string> args = {
      "x\necho INJECTED > " + dir + "/injected #",
      "import sys\nprint(1)",
      "cr\recho CR > " + dir + "/injected-cr",
      "esc\x1b[2J\x1b]0;title\x07",
      "$(touch " + dir + "/injected-subshell)",
      "`touch " + dir + "/injected-backtick`",
      "it's \"double\" 'single'",
      "",
      "tab\there",
      "del\x7f",
      "\xc2\x9b" "31m",
      "ünïcödé",
      "back\\slash\\",
      "$HOME ${PATH} *",
      "--",
      "-x",
      " lead and trail ",
      "new\n",
  };
  if (!utf8_only) args.push_back("\xff\xfe not utf-8");
  return args;
}

std::string ReadOr(const std::string& path, const std::string& fallback = "(missing)") {
  auto text = ReadFile(path);
  return text.ok() ? *text : fallback;
}

// Bytes a terminal acts on: ESC, CR, BEL, DEL, C1 controls (raw or as UTF-8), and bytes that are not UTF-8.
std::string RawControls(const std::string& text) {
  std::string found;
  for (const std::string& line : Split(text, '\n')) {
    if (HasControlCharacter(ReplaceAll(line, "\t", " "))) found += "[" + EscapeControlCharacters(line) + "]\n";
  }
  return found;
}

// The files a successful injection would have created.
void ExpectNothingInjected(const std::string& dir) {
  for (const char* name : {"injected", "injected-cr", "injected-subshell", "injected-backtick"}) {
    EXPECT_FALSE(PathExists(dir + "/" + name)) << name << ": an argument ran as shell code";
  }
}

class ArgumentIntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = dir_.path() + "/write_argv.sh";
    ASSERT_TRUE(WriteFileAtomic(worker_, ReadOr(kWorkerSource), 0755).ok());
  }
  // `run /bin/sh write_argv.sh <dir>/argv ARGS...`
  std::vector<std::string> Task(const std::vector<std::string>& args) const {
    std::vector<std::string> task = {"run", "/bin/sh", worker_, dir_.path() + "/argv"};
    task.insert(task.end(), args.begin(), args.end());
    return task;
  }
  void ExpectReceived(const std::vector<std::string>& args, int ranks = 1) const {
    for (int rank = 0; rank < ranks; ++rank) {
      std::string path = dir_.path() + "/argv." + std::to_string(rank);
      ASSERT_TRUE(PathExists(path)) << "rank " << rank << " wrote nothing";
      std::vector<std::string> received = SplitNul(ReadOr(path));
      EXPECT_EQ(received, args) << "rank " << rank << " received: " << ShellJoin(received);
    }
    ExpectNothingInjected(dir_.path());
  }
  ProcessOptions Options(EnvOverrides env = {}) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env = std::move(env);
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_DIRECT_LOG_DIR"] = dir_.path() + "/agent-logs";
    options.timeout_s = 120;
    return options;
  }

  TempDir dir_;
  std::string worker_;
};

TEST_F(ArgumentIntegrityTest, DirectPassesEveryByte) {
  std::vector<std::string> args = AwkwardArguments(dir_.path());
  std::vector<std::string> command = {"direct", "--"};
  for (const std::string& word : Task(args)) command.push_back(word);
  ProcessResult result = RunPrimus(command, Options());
  ASSERT_EQ(result.exit_code, 0) << result.all();
  ExpectReceived(args);
}

// --dry-run prints each plan with the arguments quoted: no raw ESC, CR or
// line break from an argument reaches the terminal, and what is printed
// is bash's exact quoting of them.
TEST_F(ArgumentIntegrityTest, DryRunPrintsArgumentsQuotedAndCannotDriveTheTerminal) {
  for (std::vector<std::string> mode : {std::vector<std::string>{"direct", "--"},
                                        std::vector<std::string>{"slurm", "sbatch", "-N", "1", "--"},
                                        std::vector<std::string>{"slurm", "srun", "-N", "1", "--"},
                                        std::vector<std::string>{"container", "--image", "local/mini", "--"}}) {
    SCOPED_TRACE(mode[0]);
    std::vector<std::string> args = AwkwardArguments(dir_.path(), /*utf8_only=*/mode[0] == "container");
    std::vector<std::string> command = {"--dry-run"};
    command.insert(command.end(), mode.begin(), mode.end());
    for (const std::string& word : Task(args)) command.push_back(word);
    ProcessResult result = RunPrimus(command, Options());
    ASSERT_EQ(result.exit_code, 0) << result.all();
    EXPECT_EQ(RawControls(result.out), "") << "raw control characters on stdout";
    EXPECT_EQ(RawControls(result.err), "") << "raw control characters on stderr";
    EXPECT_NE(result.out.find(ShellQuote(args[0])), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("$'x\\necho INJECTED > "), std::string::npos) << result.out;
    EXPECT_FALSE(PathExists(dir_.path() + "/argv.0")) << "--dry-run runs nothing";
  }
}

// The manifest read back by a YAML parser: the pods' command is exactly the
// arguments, and the documents hold nothing else that came from them. A
// byte that is not UTF-8 cannot be carried by YAML: a clear error, not a
// changed argument.
TEST_F(ArgumentIntegrityTest, KubernetesManifestCarriesEveryArgument) {
  std::vector<std::string> args = AwkwardArguments(dir_.path(), /*utf8_only=*/true);
  std::vector<std::string> command = {"k8s", "manifest", "-N", "2", "--image", "rocm/primus:test", "--name", "args",
                                      "--"};
  for (const std::string& word : Task(args)) command.push_back(word);
  ProcessResult result = RunPrimus(command, Options());
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(RawControls(result.out), "");
  std::vector<YAML::Node> documents = YAML::LoadAll(result.out);
  ASSERT_EQ(documents.size(), 2u) << result.out;
  EXPECT_EQ(documents[0]["kind"].as<std::string>(), "Service");
  EXPECT_EQ(documents[1]["kind"].as<std::string>(), "Job");
  std::vector<std::string> pod_command;
  for (const YAML::Node& item : documents[1]["spec"]["template"]["spec"]["containers"][0]["command"]) {
    pod_command.push_back(item.as<std::string>());
  }
  std::vector<std::string> task = Task(args);
  ASSERT_GE(pod_command.size(), task.size());
  std::vector<std::string> tail(pod_command.end() - static_cast<long>(task.size()), pod_command.end());
  EXPECT_EQ(tail, task) << ShellJoin(pod_command);

  command = {"k8s", "manifest", "-N", "1", "--image", "i", "--", "run", "/bin/echo", "\xff"};
  ProcessResult refused = RunPrimus(command, Options());
  EXPECT_EQ(refused.exit_code, 2) << refused.all();
  EXPECT_NE(refused.err.find("not valid UTF-8"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "") << "no manifest with a changed argument";
}

// ---- Real Slurm: srun and sbatch on two nodes ------------------------------

class SlurmArgumentsTest : public ArgumentIntegrityTest {
 protected:
  static void SetUpTestSuite() {
    unavailable_ = SlurmCluster::Unavailable();
    if (unavailable_.empty()) cluster_ = SlurmCluster::Start({}, &start_error_).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!unavailable_.empty()) GTEST_SKIP() << "no local Slurm cluster: " << unavailable_;
    ASSERT_NE(cluster_, nullptr) << "the Slurm cluster did not start: " << start_error_;
    ArgumentIntegrityTest::SetUp();
  }
  ProcessResult Slurm(const std::vector<std::string>& mode, const std::vector<std::string>& task) const {
    EnvOverrides env = cluster_->Environment();
    env["HOME"] = dir_.path();
    std::vector<std::string> command = mode;
    command.insert(command.end(), task.begin(), task.end());
    return RunPrimus(command, Options(env));
  }

  static inline SlurmCluster* cluster_ = nullptr;
  static inline std::string unavailable_;
  static inline std::string start_error_;
};

TEST_F(SlurmArgumentsTest, SrunPassesEveryByteToEveryNode) {
  std::vector<std::string> args = AwkwardArguments(dir_.path());
  ProcessResult result = Slurm({"slurm", "srun", "-N", "2", "--"}, Task(args));
  ASSERT_EQ(result.exit_code, 0) << result.all();
  ExpectReceived(args, 2);
}

// Issue 16's reproduction: the batch script repeated the command line in
// comments, and the line break in an argument ended the comment, so that
// `echo INJECTED` ran on the batch node. Now no line of the script holds a
// raw control character, and every argument arrives on both nodes.
TEST_F(SlurmArgumentsTest, SbatchPassesEveryByteAndRunsNoInjectedLine) {
  std::vector<std::string> args = AwkwardArguments(dir_.path());
  ProcessResult result = Slurm({"slurm", "sbatch", "-N", "2", "--wait", "--"}, Task(args));
  ASSERT_EQ(result.exit_code, 0) << result.all();
  ExpectReceived(args, 2);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(result.out, match, std::regex("script: (\\S+)"))) << result.out;
  std::string script = ReadOr(match[1].str());
  EXPECT_EQ(RawControls(script), "") << script;
  EXPECT_NE(script.find("# Written by primus-cli"), std::string::npos) << script;
}

// The issue's two examples as a user types them: `run /bin/echo` of a
// would-be injection prints it verbatim, and a multi-line `python3 -c`
// program runs (it failed the job with a bash syntax error).
TEST_F(SlurmArgumentsTest, SbatchRunsTheIssuesExamples) {
  std::string injection = "x\necho INJECTED > " + dir_.path() + "/injected #";
  ProcessResult echoed = Slurm({"slurm", "sbatch", "-N", "1", "--wait", "--"}, {"run", "/bin/echo", injection});
  ASSERT_EQ(echoed.exit_code, 0) << echoed.all();
  // Both lines of the argument, as echo printed them (a line may carry the node's prefix).
  EXPECT_NE(echoed.out.find("x\n"), std::string::npos) << echoed.out;
  EXPECT_NE(echoed.out.find("echo INJECTED > " + dir_.path() + "/injected #\n"), std::string::npos) << echoed.out;
  ExpectNothingInjected(dir_.path());

  std::string program = "import sys\nopen(sys.argv[1], 'w').write('multi-line ok')";
  ProcessResult python =
      Slurm({"slurm", "sbatch", "-N", "1", "--wait", "--"}, {"run", "/usr/bin/python3", "-c", program, dir_.path() + "/py.out"});
  ASSERT_EQ(python.exit_code, 0) << python.all();
  EXPECT_EQ(ReadOr(dir_.path() + "/py.out"), "multi-line ok");
}

// ---- Real podman -----------------------------------------------------------

class PodmanArgumentsTest : public ArgumentIntegrityTest {
 protected:
  static void SetUpTestSuite() {
    store_ = PodmanStore::Start(&setup_error_).release();
    if (store_ != nullptr) setup_error_ = store_->ImportImage(RootfsKind::kMini, "local/mini");
  }
  static void TearDownTestSuite() {
    delete store_;
    store_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(store_ != nullptr && setup_error_.empty()) << setup_error_;
    ArgumentIntegrityTest::SetUp();
  }

  static inline PodmanStore* store_ = nullptr;
  static inline std::string setup_error_;
};

TEST_F(PodmanArgumentsTest, ContainerPassesEveryByte) {
  std::vector<std::string> args = AwkwardArguments(dir_.path(), /*utf8_only=*/true);
  std::vector<std::string> command = {"container", "--image", "local/mini", "--pull", "never", "--"};
  for (const std::string& word : Task(args)) command.push_back(word);
  ProcessResult result = RunPrimus(command, Options(store_->Environment()));
  ASSERT_EQ(result.exit_code, 0) << result.all();
  ExpectReceived(args);
  EXPECT_EQ(store_->ContainerNames(), std::vector<std::string>{}) << "the container is gone";

  // The engine hands the command over as JSON, which would turn a byte that
  // is not UTF-8 into U+FFFD: refused (exit 2), not changed, nothing started.
  command = {"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/sh", worker_,
             dir_.path() + "/bad", "\xff\xfe"};
  ProcessResult refused = RunPrimus(command, Options(store_->Environment()));
  EXPECT_EQ(refused.exit_code, 2) << refused.all();
  EXPECT_NE(refused.err.find("not valid UTF-8"), std::string::npos) << refused.err;
  EXPECT_FALSE(PathExists(dir_.path() + "/bad.0"));
}

}  // namespace
}  // namespace primus::testing
