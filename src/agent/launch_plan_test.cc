#include "agent/launch_plan.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <vector>

#include "util/files.h"
#include "util/random.h"

namespace primus::agent {
namespace {

// Log directories of this test binary, removed when it exits.
struct ScratchDirs {
  std::vector<std::string> dirs;
  ~ScratchDirs() {
    for (const std::string& dir : dirs) std::filesystem::remove_all(dir);
  }
  std::string Make(const char* tag) {
    std::string pattern = std::string("/tmp/primus-") + tag + "-XXXXXX";
    dirs.push_back(mkdtemp(pattern.data()));
    return dirs.back();
  }
} scratch;

LaunchSpec TrueSpec() {
  LaunchSpec spec;
  spec.argv = {"true"};
  spec.nproc_per_node = 2;
  spec.log_dir = scratch.Make("plan") + "/logs";
  return spec;
}

ExitCode CodeOf(const LaunchSpec& spec) {
  auto plan = PlanLaunch(spec);
  return plan.ok() ? ExitCode::kOk : plan.error().code;
}

TEST(LaunchPlanTest, FillsDefaults) {
  LaunchSpec spec = TrueSpec();
  spec.log_dir.clear();
  std::string tmpdir = scratch.Make("plan-tmpdir");
  setenv("TMPDIR", tmpdir.c_str(), 1);
  auto plan = PlanLaunch(spec);
  unsetenv("TMPDIR");
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_TRUE(std::regex_match(plan->spec.run_id, std::regex("[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")))
      << plan->spec.run_id;
  EXPECT_EQ(plan->spec.log_dir, tmpdir + "/primus-" + std::to_string(getuid()) + "/" + plan->spec.run_id);
  EXPECT_TRUE(IsDirectory(plan->spec.log_dir));
  EXPECT_EQ(plan->spec.master_addr, "127.0.0.1");
  EXPECT_GT(plan->spec.master_port, 0);
  EXPECT_EQ(plan->executable, FindExecutable("true"));
  EXPECT_EQ(plan->token.size(), 32u);
  EXPECT_NE(plan->token, *NewJobToken());
  EXPECT_GE(plan->cpu_count, 1);
  EXPECT_EQ(plan->world_size(), 2);
}

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  ::lstat(path.c_str(), &info);
  return info.st_mode & 07777;
}

TEST(RunLogDirTest, AReusedRunIdGetsAFreshDirectoryNeverTheOldOne) {
  std::string tmpdir = scratch.Make("runs");
  setenv("TMPDIR", tmpdir.c_str(), 1);
  auto first = MakeRunLogDir("", "job-1", "hostA", 0);
  auto second = MakeRunLogDir("", "job-1", "hostA", 0);
  unsetenv("TMPDIR");
  ASSERT_TRUE(first.ok()) << first.error().Format();
  ASSERT_TRUE(second.ok()) << second.error().Format();
  std::string runs = tmpdir + "/primus-" + std::to_string(getuid());
  EXPECT_EQ(*first, runs + "/job-1");
  EXPECT_TRUE(std::regex_match(*second, std::regex(runs + "/job-1_[0-9a-f]{8}"))) << *second;
  EXPECT_EQ(ModeOf(runs), 0700u);
  EXPECT_EQ(ModeOf(*first), 0700u);
}

TEST(RunLogDirTest, ADefaultRootAnotherUserMadeOrLinkedIsRefusedNamingTheOwner) {
  std::string tmpdir = scratch.Make("runs");
  std::string runs = tmpdir + "/primus-" + std::to_string(getuid());
  ASSERT_EQ(::symlink("/etc", runs.c_str()), 0);
  setenv("TMPDIR", tmpdir.c_str(), 1);
  auto linked = MakeRunLogDir("", "job-1", "hostA", 0);
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.error().code, ExitCode::kUnavailable);
  EXPECT_NE(linked.error().message.find(runs + ": it is a symbolic link"), std::string::npos) << linked.error().message;
  ::unlink(runs.c_str());
  if (::geteuid() != 0) {
    unsetenv("TMPDIR");
    GTEST_SKIP() << "needs root to give the directory to another user";
  }
  ASSERT_EQ(::mkdir(runs.c_str(), 0777), 0);
  ASSERT_EQ(::chown(runs.c_str(), 65534, 65534), 0);
  auto foreign = MakeRunLogDir("", "job-1", "hostA", 0);
  unsetenv("TMPDIR");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("owned by nobody (uid 65534)"), std::string::npos) << foreign.error().message;
  EXPECT_FALSE(PathExists(runs + "/job-1")) << "nothing was created in it";
}

TEST(RunLogDirTest, AGivenDirectoryIsSharedByHostsButNeverReusedByOne) {
  std::string base = scratch.Make("given");
  std::string given = base + "/logs";
  auto fresh = MakeRunLogDir(given, "job-1", "hostA", 0);
  ASSERT_TRUE(fresh.ok()) << fresh.error().Format();
  EXPECT_EQ(*fresh, given);
  EXPECT_EQ(ModeOf(given), 0700u);
  ASSERT_TRUE(MakeDirs(given + "/attempt_0").ok());
  ASSERT_TRUE(WriteFileAtomic(given + "/attempt_0/hostA.rank0.log", "earlier run\n").ok());
  auto other_host = MakeRunLogDir(given, "job-2", "hostB", 0);
  ASSERT_TRUE(other_host.ok());
  EXPECT_EQ(*other_host, given) << "another host of the job writes its own files beside";
  auto same_host = MakeRunLogDir(given, "job-2", "hostA", 0);
  ASSERT_TRUE(same_host.ok());
  EXPECT_EQ(*same_host, given + "/job-2");
  EXPECT_EQ(*ReadFile(given + "/attempt_0/hostA.rank0.log"), "earlier run\n");
  // The job's other nodes, which ran there before too, join that directory (the same run id).
  ASSERT_TRUE(WriteFileAtomic(given + "/attempt_0/hostB.rank1.log", "earlier run\n").ok());
  auto other_node = MakeRunLogDir(given, "job-2", "hostB", 0);
  ASSERT_TRUE(other_node.ok());
  EXPECT_EQ(*other_node, given + "/job-2") << "the job's logs stay together";
}

// A requeued job (the scheduler's restart count 1) starts at attempt_1: the
// earlier run's attempt_0 is no clash, and the job's logs stay together.
TEST(RunLogDirTest, ARequeuedJobKeepsItsLogDirectory) {
  std::string given = scratch.Make("requeue") + "/logs";
  ASSERT_TRUE(MakeDirs(given + "/attempt_0", 0700).ok());
  ASSERT_EQ(::chmod(given.c_str(), 0700), 0);
  ASSERT_TRUE(WriteFileAtomic(given + "/attempt_0/hostA.rank0.log", "first run\n").ok());
  auto requeued = MakeRunLogDir(given, "job-3", "hostA", /*first_generation=*/1);
  ASSERT_TRUE(requeued.ok());
  EXPECT_EQ(*requeued, given);
  auto rerun = MakeRunLogDir(given, "job-3", "hostA", /*first_generation=*/0);
  ASSERT_TRUE(rerun.ok());
  EXPECT_EQ(*rerun, given + "/job-3") << "a run from attempt 0 again would overwrite: a directory of its own";
}

// A shared scratch directory of another user's, open to all with the sticky
// bit (as /tmp): this run's logs go to a directory of its own inside it.
TEST(RunLogDirTest, ASharedStickyDirectoryGetsADirectoryOfOursInside) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another user";
  std::string shared = scratch.Make("scratch") + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  ASSERT_EQ(::chown(shared.c_str(), 65534, 65534), 0);
  auto own = MakeRunLogDir(shared, "job-4", "hostA", 0);
  ASSERT_TRUE(own.ok()) << own.error().Format();
  EXPECT_EQ(*own, shared + "/job-4");
  EXPECT_EQ(ModeOf(*own), 0700u);
  // Not sticky: anyone could swap what we make there.
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  EXPECT_FALSE(MakeRunLogDir(shared, "job-5", "hostA", 0).ok());
}

TEST(LaunchPlanTest, StaticMultiNodeRanks) {
  LaunchSpec spec = TrueSpec();
  spec.nnodes = 3;
  spec.node_rank = 2;
  spec.nproc_per_node = 4;
  spec.master_addr = "10.0.0.1";
  spec.master_port = 29500;
  auto plan = PlanLaunch(spec);
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_EQ(plan->world_size(), 12);
  EXPECT_EQ(plan->global_rank(3), 11);
}

// Handed-out ranks: the coordinator picks the master port per generation,
// and an elastic range needs such a rendezvous.
TEST(LaunchPlanTest, ElasticJobsNeedARendezvousThatHandsRanksOut) {
  LaunchSpec spec = TrueSpec();
  spec.nnodes = 4;
  spec.min_nnodes = 2;
  spec.rendezvous = "c10d";
  spec.master_addr = "node0";
  spec.control_port = 29400;
  auto plan = PlanLaunch(spec);
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_EQ(plan->spec.master_port, 0) << "the coordinator picks it for each generation";

  LaunchSpec fixed_ranks = spec;
  fixed_ranks.rendezvous = "static";
  fixed_ranks.master_port = 29500;
  auto refused = PlanLaunch(fixed_ranks);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ExitCode::kUsage);
  EXPECT_NE(refused.error().message.find("an elastic job (2:4 nodes) needs node ranks handed out"), std::string::npos);
  EXPECT_NE(refused.error().hint.find("--rendezvous c10d"), std::string::npos);

  LaunchSpec no_endpoint = spec;
  no_endpoint.control_port = 0;
  EXPECT_EQ(CodeOf(no_endpoint), ExitCode::kUsage);
  LaunchSpec etcd_without_id = spec;
  etcd_without_id.rendezvous = "etcd-v2";
  etcd_without_id.rdzv_endpoint = "etcd0:2379";
  EXPECT_EQ(CodeOf(etcd_without_id), ExitCode::kUsage);
  etcd_without_id.run_id = "job7";
  EXPECT_EQ(CodeOf(etcd_without_id), ExitCode::kOk);
  LaunchSpec too_few = spec;
  too_few.min_nnodes = 5;
  EXPECT_EQ(CodeOf(too_few), ExitCode::kUsage);
}

TEST(LaunchPlanTest, MissingExecutableIsUnavailable) {
  LaunchSpec spec = TrueSpec();
  spec.argv = {"no-such-worker-binary-xyz", "--flag"};
  auto plan = PlanLaunch(spec);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ExitCode::kUnavailable);
  EXPECT_NE(plan.error().message.find("'no-such-worker-binary-xyz' was not found on PATH"), std::string::npos);
  spec.argv = {"/nonexistent/bin/worker"};
  EXPECT_EQ(CodeOf(spec), ExitCode::kUnavailable);
}

TEST(LaunchPlanTest, BadSpecsAreUsageErrors) {
  auto with = [](auto change) {
    LaunchSpec spec = TrueSpec();
    change(spec);
    return CodeOf(spec);
  };
  EXPECT_EQ(with([](LaunchSpec& s) { s.argv.clear(); }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.nproc_per_node = 0; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.node_rank = 1; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.nnodes = 2; s.master_addr = "h"; }), ExitCode::kUsage);  // no port
  EXPECT_EQ(with([](LaunchSpec& s) { s.nnodes = 2; s.master_port = 29500; }), ExitCode::kUsage);  // no addr
  EXPECT_EQ(with([](LaunchSpec& s) { s.master_port = 70000; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.max_restarts = -1; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.term_timeout_s = -1; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.ranks_filter = {2}; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.run_id = "../escape"; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.console_prefix = "{nope}"; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.env["RANK"] = "3"; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.env["FOO"] = "bar"; }), ExitCode::kOk);
  // Placement must cover exactly the local ranks, with real CPU numbers.
  EXPECT_EQ(with([](LaunchSpec& s) { s.placements = {{{0}, 1}}; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.placements = {{{0}, 1}, {{-1}, 1}}; }), ExitCode::kUsage);
  EXPECT_EQ(with([](LaunchSpec& s) { s.placements = {{{0}, 1}, {{}, 0}}; }), ExitCode::kOk);
}

TEST(LaunchPlanTest, PortInUseOnNodeZeroIsUnavailableNamingIt) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);

  LaunchSpec spec = TrueSpec();
  spec.master_port = port;
  auto plan = PlanLaunch(spec);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ExitCode::kUnavailable);
  EXPECT_NE(plan.error().message.find("master port " + std::to_string(port) + " is already in use"),
            std::string::npos);
  // Another node's agent does not own the port: no check there.
  spec.nnodes = 2;
  spec.node_rank = 1;
  spec.master_addr = "127.0.0.1";
  EXPECT_TRUE(PlanLaunch(spec).ok());
  ::close(listener);
}

}  // namespace
}  // namespace primus::agent
