// Installing and first use, as a user meets them: shell completion driven
// through real bash (and loaded by zsh and fish), the man pages rendered by
// man(1), `cmake --install` into a fresh prefix, the Debian package unpacked
// and run, and the commit `--version` names.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "run_process.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

bool Installed(const std::string& program) {
  return RunProcess({"sh", "-c", "command -v " + program}).exit_code == 0;
}

std::string BinaryDir() { return fs::path(PRIMUS_BINARY).parent_path().string(); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (const std::string& line : Split(text, '\n')) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProcessResult script = RunPrimus({"completion", "bash"});
    ASSERT_EQ(script.exit_code, 0) << script.err;
    script_ = dir_.Write("primus-cli.bash", script.out);
    dir_.Write("exp.yaml", "backend: torch\n");
    dir_.Write("notes.txt", "not an experiment\n");
    dir_.Write("configs/tiny.yaml", "backend: torch\n");
  }
  // COMPREPLY after TAB at the end of `line` (the word being completed is
  // the text after the last space), from the script `completion bash` prints,
  // in a real bash that finds primus-cli on PATH as a user's shell does.
  std::vector<std::string> Tab(const std::string& line) const {
    std::string program =
        "source " + script_ + "\n"
        "line=$1\n"
        "read -ra COMP_WORDS <<< \"$line\"\n"
        "[[ $line == *' ' ]] && COMP_WORDS+=('')\n"
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        "COMP_LINE=$line; COMP_POINT=${#line}\n"
        "_primus_cli primus-cli\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["PATH"] = BinaryDir() + ":" + std::string(getenv("PATH"));
    ProcessResult result = RunProcess({"bash", "--norc", "--noprofile", "-c", program, "bash", line}, options);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    std::vector<std::string> words = Lines(result.out);
    std::sort(words.begin(), words.end());
    return words;
  }
  TempDir dir_;
  std::string script_;
};

TEST_F(CompletionTest, BashCompletesModesTasksAndSubtasks) {
  EXPECT_EQ(Tab("primus-cli di"), std::vector<std::string>{"direct"});
  EXPECT_EQ(Tab("primus-cli direct -- tr"), std::vector<std::string>{"train"});
  EXPECT_EQ(Tab("primus-cli direct -- train pre"), std::vector<std::string>{"pretrain"});
  EXPECT_EQ(Tab("primus-cli slurm sb"), std::vector<std::string>{"sbatch"});
  EXPECT_EQ(Tab("primus-cli direct --nproc-per"), std::vector<std::string>{"--nproc-per-node"});
}

TEST_F(CompletionTest, BashCompletesFlagValues) {
  EXPECT_EQ(Tab("primus-cli benchmark gemm --dtype "), (std::vector<std::string>{"bf16", "fp16", "fp32", "fp8", "tf32"}));
  EXPECT_EQ(Tab("primus-cli --log-level "), (std::vector<std::string>{"debug", "error", "info", "warn"}));
  EXPECT_EQ(Tab("primus-cli container --engine p"), std::vector<std::string>{"podman"});
}

TEST_F(CompletionTest, BashCompletesExperimentFilesForConfig) {
  // YAML files and directories to look into; not other files.
  EXPECT_EQ(Tab("primus-cli direct -- train pretrain --config "), (std::vector<std::string>{"configs", "exp.yaml"}));
  EXPECT_EQ(Tab("primus-cli direct -- train pretrain --config configs/"), std::vector<std::string>{"configs/tiny.yaml"});
  EXPECT_EQ(Tab("primus-cli direct --log-dir "), std::vector<std::string>{"configs"});
}

// The places completion reached this turn, through real bash: --set's keys
// (no space after the "="), init's models, and the torchrun link beside
// primus-cli, which the script registers because it is primus-cli's.
TEST_F(CompletionTest, BashCompletesSetKeysInitModelsAndTheTorchrunLink) {
  EXPECT_EQ(Tab("primus-cli --set direct.max_re"), std::vector<std::string>{"direct.max_restarts="});
  EXPECT_EQ(Tab("primus-cli init qw"), std::vector<std::string>{"qwen3-8b"});
  EXPECT_EQ(Tab("primus-cli init llama3-8b --backend torcht"), std::vector<std::string>{"torchtitan"});
  ASSERT_TRUE(fs::exists(BinaryDir() + "/torchrun")) << "the build makes the torchrun link";
  EXPECT_EQ(Tab("torchrun --rdzv-backend c"), std::vector<std::string>{"c10d"});
  EXPECT_EQ(Tab("torchrun --nproc-per"), std::vector<std::string>{"--nproc-per-node"});
  // Registered for torchrun where that is primus-cli's link; python3-torch's alone is left alone.
  ProcessOptions options;
  options.env["PATH"] = BinaryDir() + ":" + std::string(getenv("PATH"));
  ProcessResult ours = RunProcess({"bash", "--norc", "--noprofile", "-c", "source " + script_ + "; complete -p torchrun"}, options);
  EXPECT_NE(ours.out.find("_primus_cli torchrun"), std::string::npos) << ours.all();
  dir_.Write("other/torchrun", "#!/bin/sh\n");
  ASSERT_EQ(chmod((dir_.path() + "/other/torchrun").c_str(), 0755), 0);
  options.env["PATH"] = dir_.path() + "/other:" + BinaryDir() + ":" + std::string(getenv("PATH"));
  ProcessResult theirs = RunProcess({"bash", "--norc", "--noprofile", "-c", "source " + script_ + "; complete -p torchrun"}, options);
  EXPECT_EQ(theirs.out.find("_primus_cli"), std::string::npos) << theirs.all();
}

TEST_F(CompletionTest, ZshLoadsItsScript) {
  if (!Installed("zsh")) GTEST_SKIP() << "zsh is not installed (scripts/setup.sh --all installs it)";
  ProcessResult script = RunPrimus({"completion", "zsh"});
  ASSERT_EQ(script.exit_code, 0);
  std::string file = dir_.Write("_primus-cli", script.out);
  ProcessResult zsh = RunProcess({"zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -d " + dir_.path() +
                                                        "/zcompdump && source " + file + " && whence -w _primus_cli"});
  EXPECT_EQ(zsh.exit_code, 0) << zsh.all();
  EXPECT_EQ(zsh.err, "");
  EXPECT_NE(zsh.out.find("_primus_cli: function"), std::string::npos) << zsh.out;
}

TEST_F(CompletionTest, FishCompletesWithItsScript) {
  if (!Installed("fish")) GTEST_SKIP() << "fish is not installed (scripts/setup.sh --all installs it)";
  ProcessResult script = RunPrimus({"completion", "fish"});
  ASSERT_EQ(script.exit_code, 0);
  std::string file = dir_.Write("primus-cli.fish", script.out);
  ProcessOptions options;
  options.cwd = dir_.path();
  options.env["PATH"] = BinaryDir() + ":" + std::string(getenv("PATH"));
  options.env["HOME"] = dir_.path();
  ProcessResult fish = RunProcess({"fish", "--no-config", "-c",
                                   "source " + file + "; complete -C 'primus-cli di'; complete -C 'primus-cli benchmark gemm --dtype bf'"},
                                  options);
  EXPECT_EQ(fish.exit_code, 0) << fish.all();
  EXPECT_EQ(Lines(fish.out), (std::vector<std::string>{"direct", "bf16"})) << fish.all();
}

TEST(ManPageTest, EveryPageRendersWithoutWarnings) {
  if (!Installed("man")) GTEST_SKIP() << "man is not installed (scripts/setup.sh --all installs man-db)";
  TempDir dir;
  ProcessResult written = RunPrimus({"__man", "--dir", dir.path()});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  int pages = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    std::string file = entry.path().string();
    ++pages;
    ProcessOptions options;
    options.env["MANWIDTH"] = "80";
    ProcessResult warnings = RunProcess({"sh", "-c", "man -l --warnings \"$1\" 2>&1 >/dev/null", "sh", file}, options);
    EXPECT_EQ(warnings.exit_code, 0) << file;
    EXPECT_EQ(warnings.out, "") << file;
    ProcessResult text = RunProcess({"man", "-l", file}, options);
    for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"}) {
      EXPECT_NE(text.out.find("\n" + std::string(section) + "\n"), std::string::npos) << file << " has no " << section;
    }
  }
  EXPECT_GE(pages, 12);  // primus-cli, five modes, six tasks
  ProcessResult train = RunProcess({"man", "-l", dir.path() + "/primus-cli-train.1"});
  EXPECT_NE(train.out.find("--config"), std::string::npos) << train.out;
}

// What `git rev-parse` says of the source tree, "" when it is not a checkout.
std::string SourceCommit() {
  ProcessResult head = RunProcess({"git", "-C", PRIMUS_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  return head.exit_code == 0 ? std::string(Trim(head.out)) : "";
}

TEST(VersionTest, NamesTheCommitItWasBuiltFrom) {
  ProcessResult version = RunPrimus({"--version"});
  ASSERT_EQ(version.exit_code, 0);
  std::string commit = SourceCommit();
  if (commit.empty()) {
    EXPECT_NE(version.out.find("no git commit"), std::string::npos) << version.out;
  } else {
    EXPECT_NE(version.out.find("(commit " + commit), std::string::npos) << version.out;
  }
}

// The build step that reads the commit, on a tree of each kind.
std::string BuildCommitText(const std::string& source, const std::string& output_dir) {
  std::string output = output_dir + "/build_commit.cc";
  ProcessResult run = RunProcess({"cmake", "-DSOURCE_DIR=" + source, "-DOUTPUT=" + output, "-P",
                                  std::string(PRIMUS_SOURCE_DIR) + "/cmake/build_commit.cmake"});
  EXPECT_EQ(run.exit_code, 0) << run.all();
  std::string text = Slurp(output);
  size_t start = text.find("return \"");
  return start == std::string::npos ? text : text.substr(start + 8, text.find('"', start + 8) - start - 8);
}

TEST(VersionTest, SaysDirtyOrThatThereWasNoGit) {
  TempDir tree, out;
  EXPECT_EQ(BuildCommitText(tree.path(), out.path()), "no git commit: built from a source tree without .git");
  tree.Write("a.txt", "one\n");
  auto git = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-C", tree.path(), "-c", "user.name=t", "-c", "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    EXPECT_EQ(result.exit_code, 0) << result.all();
    return std::string(Trim(result.out));
  };
  git({"init", "-q"});
  git({"add", "a.txt"});
  git({"commit", "-qm", "one"});
  std::string commit = git({"rev-parse", "--short=12", "HEAD"});
  EXPECT_EQ(BuildCommitText(tree.path(), out.path()), "commit " + commit);
  tree.Write("a.txt", "two\n");
  EXPECT_EQ(BuildCommitText(tree.path(), out.path()), "commit " + commit + ", dirty");
  // A tarball unpacked inside another checkout has no history of its own.
  tree.Write("unpacked/CMakeLists.txt", "\n");
  EXPECT_EQ(BuildCommitText(tree.path() + "/unpacked", out.path()), "no git commit: built from a source tree without .git");
}

void ExpectInstalledTree(const std::string& root) {
  for (const char* file : {"bin/primus-cli", "share/man/man1/primus-cli.1", "share/man/man1/primus-cli-train.1",
                           "share/man/man1/primus-cli-direct.1", "share/bash-completion/completions/primus-cli",
                           "share/zsh/vendor-completions/_primus-cli", "share/fish/vendor_completions.d/primus-cli.fish",
                           "share/primus-cli/signatures.yaml"}) {
    EXPECT_TRUE(fs::is_regular_file(root + "/" + file)) << root << "/" << file;
  }
  EXPECT_TRUE(fs::is_directory(root + "/share/primus-cli/profiles")) << root;
  EXPECT_EQ(fs::read_symlink(root + "/libexec/primus-cli/torchrun"), "../../bin/primus-cli");
  ProcessResult version = RunProcess({root + "/bin/primus-cli", "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.all();
  EXPECT_EQ(version.out.rfind("primus-cli ", 0), 0u) << version.out;
  // Through the link it reads torchrun's command line.
  ProcessResult torchrun = RunProcess({root + "/libexec/primus-cli/torchrun", "--help"});
  EXPECT_NE(torchrun.out.find("usage: torchrun"), std::string::npos) << torchrun.all();
}

TEST(InstallTest, CmakeInstallPutsEachFileWhereDebianDoes) {
  TempDir prefix;
  ProcessResult install = RunProcess({"cmake", "--install", BinaryDir(), "--prefix", prefix.path()});
  ASSERT_EQ(install.exit_code, 0) << install.all();
  ExpectInstalledTree(prefix.path());
  // bin/torchrun follows -DPRIMUS_INSTALL_TORCHRUN (ON unless configured off).
  ProcessResult cache = RunProcess({"grep", "-q", "^PRIMUS_INSTALL_TORCHRUN:BOOL=OFF", BinaryDir() + "/CMakeCache.txt"});
  EXPECT_EQ(fs::is_symlink(prefix.path() + "/bin/torchrun"), cache.exit_code != 0);
}

TEST(InstallTest, DebianPackageNeedsOnlyGlibcAndUnpacksToAWorkingTree) {
  if (!Installed("dpkg-deb")) GTEST_SKIP() << "not a Debian system";
  TempDir out;
  ProcessResult cpack = RunProcess({"cpack", "-G", "DEB", "--config", BinaryDir() + "/CPackConfig.cmake", "-B", out.path()},
                                   ProcessOptions{.cwd = BinaryDir(), .timeout_s = 300});
  ASSERT_EQ(cpack.exit_code, 0) << cpack.all();
  std::string deb;
  for (const auto& entry : fs::directory_iterator(out.path())) {
    if (entry.path().extension() == ".deb") deb = entry.path().string();
  }
  ASSERT_FALSE(deb.empty()) << cpack.all();
  EXPECT_EQ(fs::path(deb).filename().string(), "primus-cli_" PRIMUS_PROJECT_VERSION "_amd64.deb");
  ProcessResult depends = RunProcess({"dpkg-deb", "-f", deb, "Depends"});
  EXPECT_EQ(depends.exit_code, 0);
  EXPECT_EQ(std::string(Trim(depends.out)).rfind("libc6 (>= 2.", 0), 0u) << depends.out;
  EXPECT_EQ(std::string(Trim(depends.out)).find(','), std::string::npos) << "only glibc: " << depends.out;

  TempDir root;
  ProcessResult unpack = RunProcess({"dpkg-deb", "-x", deb, root.path()});
  ASSERT_EQ(unpack.exit_code, 0) << unpack.all();
  ExpectInstalledTree(root.path() + "/usr");
  // Debian's python3-torch owns /usr/bin/torchrun.
  EXPECT_FALSE(fs::exists(root.path() + "/usr/bin/torchrun"));
}

}  // namespace
}  // namespace primus::testing
