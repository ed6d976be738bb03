#include "runtime/ssh_command.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::runtime {
namespace {

// Arguments that break naive quoting: they must reach the program unchanged.
const std::vector<std::string> kNasty = {
    "plain", "with space", "it's", "\"double\"", "$(touch /tmp/primus-ssh-pwned)", "`id`", "$HOME", "a\nb\nc",
    "*", "~", "-x", "", "back\\slash", "semi;colon|pipe&amp", "'", "''", "tab\there", "!bang", "{a,b}", "#hash",
};

std::vector<std::string> RunThroughShell(const std::string& shell, const std::string& command) {
  CommandOptions options;
  options.timeout_s = 10;
  auto result = RunCommand({shell, "-c", command}, options);
  EXPECT_TRUE(result.ok());
  std::vector<std::string> args = Split(result->out, '\0');
  if (!args.empty() && args.back().empty()) args.pop_back();
  return args;
}

TEST(SshCommandTest, PosixQuotingIsExactInEveryShell) {
  // printf '%s\0' ARGS prints each argument as the shell passed it.
  std::vector<std::string> argv = {"printf", "%s\\0"};
  argv.insert(argv.end(), kNasty.begin(), kNasty.end());
  for (const char* shell : {"/bin/sh", "/bin/bash"}) {
    EXPECT_EQ(RunThroughShell(shell, PosixJoin(argv)), kNasty) << shell;
  }
  EXPECT_FALSE(PathExists("/tmp/primus-ssh-pwned"));
}

TEST(SshCommandTest, TheAgentCommandCarriesArgumentsUnchanged) {
  ScopedTempDir dir;
  // The "binary" prints its arguments and the session variables.
  std::string fake = dir.path() + "/primus cli's";
  ASSERT_TRUE(WriteFileAtomic(fake, "#!/bin/sh\nprintf '%s\\0' \"$PWD\" \"$PRIMUS_JOB_TOKEN_STDIN$PRIMUS_STOP_ON_STDIN_EOF\" \"$@\"\n", 0755).ok());
  NodeCommand node_command;
  node_command.nnodes = 3;
  node_command.master_addr = "host1";
  node_command.master_port = 29400;
  node_command.nproc_per_node = 2;
  node_command.env = {"A=b c", "Q=it's $(x)"};
  node_command.direct_options = {"--max-restarts", "1"};
  node_command.task = {"run", "python3", "-c"};
  node_command.task.insert(node_command.task.end(), kNasty.begin(), kNasty.end());
  std::vector<std::string> arguments = AgentArguments(node_command, 2);
  std::vector<std::string> expected = {dir.path(), "11"};
  expected.insert(expected.end(), arguments.begin(), arguments.end());
  std::string command = AgentShellCommand({fake, "", false}, dir.path(), arguments);
  for (const char* shell : {"/bin/sh", "/bin/bash"}) {
    EXPECT_EQ(RunThroughShell(shell, command), expected) << shell;
  }
  EXPECT_EQ(std::vector<std::string>(arguments.begin(), arguments.begin() + 16),
            (std::vector<std::string>{"direct", "--nnodes", "3", "--node-rank", "2", "--master-addr", "host1",
                                      "--master-port", "29400", "--nproc-per-node", "2", "--env", "A=b c", "--env",
                                      "Q=it's $(x)", "--max-restarts"}));
}

TEST(SshCommandTest, UnderContainerTheAgentRunsInsideTheImage) {
  NodeCommand node_command;
  node_command.globals = {"--log-level", "debug"};
  node_command.nnodes = 2;
  node_command.master_addr = "host1";
  node_command.master_port = 29400;
  node_command.nproc_per_node = 1;
  node_command.env = {"A=b c"};
  node_command.in_container = true;
  node_command.container_options = {"--image", "local/usr", "--pull", "never", "-v", "/usr:/usr:ro", "--env", "NCCL_DEBUG"};
  node_command.direct_options = {"--max-restarts", "1"};
  node_command.task = {"run", "python3", "it's $(x)"};
  EXPECT_EQ(AgentArguments(node_command, 1),
            (std::vector<std::string>{"--log-level", "debug", "container", "--image", "local/usr", "--pull", "never",
                                      "-v", "/usr:/usr:ro", "--env", "NCCL_DEBUG", "--", "direct", "--nnodes", "2",
                                      "--node-rank", "1", "--master-addr", "host1", "--master-port", "29400",
                                      "--nproc-per-node", "1", "--env", "A=b c", "--max-restarts", "1", "--", "run",
                                      "python3", "it's $(x)"}));
  // Through the remote shell word for word; the token is never among them.
  ScopedTempDir dir;
  std::string fake = dir.path() + "/primus-cli";
  ASSERT_TRUE(WriteFileAtomic(fake, "#!/bin/sh\nprintf '%s\\0' \"$@\"\n", 0755).ok());
  EXPECT_EQ(RunThroughShell("/bin/sh", AgentShellCommand({fake, "", false}, dir.path(), AgentArguments(node_command, 0))),
            AgentArguments(node_command, 0));

  node_command.in_container = false;
  EXPECT_EQ(AgentArguments(node_command, 0)[2], "direct") << "no container: the agent runs on the host";
}

TEST(SshCommandTest, SshArgvKeepsBatchModeAndTheUsersChoices) {
  auto argv = SshArgv({"-F", "cfg", "-o", "ConnectTimeout=3"}, 10, "host1", "cmd");
  EXPECT_EQ(argv, (std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-F", "cfg", "-o", "ConnectTimeout=3", "-o",
                                            "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "host1", "--",
                                            "cmd"}));
}

TEST(SshCommandTest, CheckAndCopyAgainstALocalShell) {
  ScopedTempDir dir;
  std::string binary = dir.path() + "/bin ary";
  ASSERT_TRUE(WriteFileAtomic(binary, "not really an executable\n", 0755).ok());
  auto sha = RunCommand({"sha256sum", binary});
  std::string hash = sha->out.substr(0, 64);
  RemoteBinary remote{binary, hash, false};
  CommandOptions options;
  options.env["XDG_CACHE_HOME"] = dir.path() + "/cache";
  auto run = [&](const std::string& command, const std::string& input = "") {
    CommandOptions with_input = options;
    with_input.stdin_data = input;
    return *RunCommand({"/bin/sh", "-c", command}, with_input);
  };
  auto check = ParseCheckOutput(run(CheckShellCommand(remote, dir.path())).out, hash);
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_TRUE(check->same_path);
  EXPECT_FALSE(check->cached);
  EXPECT_TRUE(check->cwd_exists);
  EXPECT_TRUE(check->glibc.starts_with("2.")) << check->glibc;

  // A corrupted copy is refused and removed; a good one lands in the cache.
  auto bad = run(CopyShellCommand(hash), "something else\n");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("sha256"), std::string::npos);
  EXPECT_FALSE(PathExists(dir.path() + "/cache/primus-cli/" + hash + "/primus-cli"));
  EXPECT_EQ(run(CopyShellCommand(hash), "not really an executable\n").exit_code, 0);
  check = ParseCheckOutput(run(CheckShellCommand(remote, "/no/such/dir")).out, hash);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->cached);
  EXPECT_FALSE(check->cwd_exists);
  // A cached file that changed is not trusted.
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/cache/primus-cli/" + hash + "/primus-cli", "tampered\n", 0700).ok());
  EXPECT_FALSE(ParseCheckOutput(run(CheckShellCommand(remote, "/")).out, hash)->cached);

  EXPECT_FALSE(ParseCheckOutput("Welcome to fish\n", hash).ok());
}

TEST(SshCommandTest, SshFailuresAreNamed) {
  EXPECT_EQ(DescribeSshFailure("root@10.1.2.3: Permission denied (publickey).\n"),
            "authentication failed (root@10.1.2.3: Permission denied (publickey).)");
  EXPECT_EQ(DescribeSshFailure("ssh: connect to host 10.1.2.3 port 22: Connection refused\n"),
            "unreachable (ssh: connect to host 10.1.2.3 port 22: Connection refused)");
  EXPECT_EQ(ClassifySshFailure("ssh: connect to host x port 22: Connection timed out"), SshFailure::kUnreachable);
  EXPECT_EQ(ClassifySshFailure("ssh: Could not resolve hostname nope: Name or service not known"),
            SshFailure::kUnreachable);
  EXPECT_EQ(ClassifySshFailure("Host key verification failed."), SshFailure::kAuthentication);
  EXPECT_EQ(DescribeSshFailure(""), "ssh failed with no message");
}

}  // namespace
}  // namespace primus::runtime
