// RunContainer with stand-in engine clients (shell scripts): the exit code,
// stderr passing through with its tail kept, and the signal path: forwarded
// once, then `<engine> rm -f NAME` when the client does not end in time.
#include "runtime/container_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "wait_for.h"

namespace primus::runtime {
namespace {

class ProcessTest : public ::testing::Test {
 protected:
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_.path() + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body, 0755).ok());
    return path;
  }
  std::string Read(const std::string& name) {
    auto text = ReadFile(dir_.path() + "/" + name);
    return text.ok() ? *text : "";
  }
  ScopedTempDir dir_{"container-process"};
};

// The helper thread must not take the signal itself: RunContainer (like the
// agent) expects every other thread to block what it handles.
void BlockStopSignalsInThisThread() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

TEST_F(ProcessTest, ExitCodeEnvironmentAndStderrTail) {
  std::string engine = Script("engine", "echo \"value=$SECRET_VALUE\" >&2\nexit 7\n");
  ContainerRun run;
  run.argv = {engine, "run", "x"};
  run.env_additions = {{"SECRET_VALUE", "kept out of argv"}};
  run.container_name = "primus-test";
  auto exit = RunContainer(run);
  ASSERT_TRUE(exit.ok()) << exit.error().Format();
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(exit->stop_signal, 0);
  EXPECT_EQ(exit->stderr_tail, "value=kept out of argv\n");
}

TEST_F(ProcessTest, AMissingClientIsAnError) {
  ContainerRun run;
  run.argv = {dir_.path() + "/no-such-engine", "run"};
  auto exit = RunContainer(run);
  ASSERT_FALSE(exit.ok());
  EXPECT_NE(exit.error().message.find("no-such-engine"), std::string::npos);
}

TEST_F(ProcessTest, ASignalIsForwardedOnceAndTheClientsCodeComesBack) {
  std::string engine = Script("engine", "trap 'echo got >> " + dir_.path() + "/log; exit 130' INT\n"
                                        "echo started > " + dir_.path() + "/started\n"
                                        "while true; do sleep 0.05; done\n");
  ContainerRun run;
  run.argv = {engine, "run"};
  run.container_name = "primus-test";
  run.stop_grace_s = 30;
  std::thread interrupt([&] {
    BlockStopSignalsInThisThread();
    // Bounded: when the client never starts, RunContainer has returned already.
    if (testing::WaitFor([&] { return PathExists(dir_.path() + "/started"); }, 30)) kill(getpid(), SIGINT);
  });
  auto exit = RunContainer(run);
  interrupt.join();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 130);
  EXPECT_EQ(exit->stop_signal, SIGINT);
  EXPECT_FALSE(exit->removed);
  EXPECT_EQ(Read("log"), "got\n") << "exactly one SIGINT reached the client";
}

TEST_F(ProcessTest, AClientThatIgnoresTheSignalGetsItsContainerRemovedByName) {
  // The stand-in ignores SIGTERM; `engine rm -f NAME` is logged and ends it.
  std::string log = dir_.path() + "/log";
  std::string engine = Script("engine",
                              "if [ \"$1\" = rm ]; then echo \"$*\" >> " + log + "; kill -9 $(cat " + dir_.path() +
                                  "/pid); exit 0; fi\n"
                                  "trap '' TERM\necho $$ > " + dir_.path() + "/pid\n"
                                  "while true; do sleep 0.05; done\n");
  ContainerRun run;
  run.argv = {engine, "run"};
  run.container_name = "primus-n0-123abc";
  run.stop_grace_s = 0.3;
  std::thread terminate([&] {
    BlockStopSignalsInThisThread();
    if (testing::WaitFor([&] { return PathExists(dir_.path() + "/pid"); }, 30)) kill(getpid(), SIGTERM);
  });
  auto started = std::chrono::steady_clock::now();
  auto exit = RunContainer(run);
  terminate.join();
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->removed);
  EXPECT_EQ(exit->stop_signal, SIGTERM);
  EXPECT_EQ(Read("log"), "rm -f primus-n0-123abc\n") << "by its name, and nothing else";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

}  // namespace
}  // namespace primus::runtime
