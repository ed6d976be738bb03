#include "runtime/hostfile.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

std::vector<std::string> Names(const std::vector<HostEntry>& hosts) {
  std::vector<std::string> out;
  for (const HostEntry& host : hosts) out.push_back(host.host);
  return out;
}

TEST(HostfileTest, ReadsEveryFormatWithCommentsAndBlankLines) {
  auto hosts = ParseHostfile(
      "# the cluster\n"
      "\n"
      "plain\n"
      "openmpi slots=8 max_slots=16\n"
      "  deepspeed\tslots=8   # trailing comment\n"
      "mpich:8\n"
      "me@login-2.example.com max-slots=4\r\n",
      "hf");
  ASSERT_TRUE(hosts.ok()) << hosts.error().message;
  EXPECT_EQ(Names(*hosts), (std::vector<std::string>{"plain", "openmpi", "deepspeed", "mpich", "me@login-2.example.com"}));
  EXPECT_EQ((*hosts)[0].slots, 0);
  EXPECT_EQ((*hosts)[1].slots, 8);
  EXPECT_EQ((*hosts)[2].slots, 8);
  EXPECT_EQ((*hosts)[3].slots, 8);
  EXPECT_EQ((*hosts)[4].slots, 0);
  EXPECT_EQ((*hosts)[2].where, "hf:5");
  EXPECT_EQ(HostName((*hosts)[4].host), "login-2.example.com");
}

TEST(HostfileTest, ErrorsNameFileAndLine) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"a\nb slots=x\n", "hf:2: 'slots=x': slots must be a whole number"},
      {"a slots=0\n", "hf:1: 'slots=0'"},
      {"a:\n", "hf:1"},
      {"a cpus=3\n", "hf:1: unknown setting 'cpus'"},
      {"a b\n", "hf:1: 'b' after the host"},
      {"-oProxyCommand=x\n", "hf:1: '-oProxyCommand=x' is not a host name"},
      {"a;rm\n", "is not a host name"},
      {"a\n\na slots=2\n", "hf:3: host a is listed twice"},
      {"# nothing\n\n", "hf names no host"},
      {"a slots=2 slots=2\n", "slots given twice"},
  };
  for (const Case& c : cases) {
    auto hosts = ParseHostfile(c.text, "hf");
    ASSERT_FALSE(hosts.ok()) << c.text;
    EXPECT_EQ(hosts.error().code, ExitCode::kConfig);
    EXPECT_NE(hosts.error().message.find(c.expected), std::string::npos) << hosts.error().message;
  }
}

TEST(HostfileTest, HostListsExpandLikeSlurm) {
  auto hosts = HostsFromList("gpu[01-03],cpu7", "--hosts");
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(Names(*hosts), (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "cpu7"}));
  EXPECT_FALSE(HostsFromList("gpu[01-", "--hosts").ok());
  EXPECT_FALSE(HostsFromList("a,a", "--hosts").ok());
}

TEST(HostfileTest, SelectIncludeExcludeAndCount) {
  auto all = HostsFromList("n[1-5]", "--hosts");
  ASSERT_TRUE(all.ok());
  auto some = SelectHosts(*all, "n[2-5]", "n3", 2);
  ASSERT_TRUE(some.ok()) << some.error().message;
  EXPECT_EQ(Names(*some), (std::vector<std::string>{"n2", "n4"}));
  EXPECT_EQ(Names(*SelectHosts(*all, "", "", 0)).size(), 5u);
  auto too_many = SelectHosts(*all, "", "n1", 5);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("-N 5 asks for more hosts than the 4 available"), std::string::npos);
  auto unknown = SelectHosts(*all, "", "n9", 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("--exclude names n9"), std::string::npos);
  EXPECT_FALSE(SelectHosts(*all, "", "n[1-5]", 0).ok());
}

TEST(HostfileTest, EveryHostNeedsTheSameSlots) {
  auto same = ParseHostfile("a slots=4\nb:4\n", "hf");
  EXPECT_EQ(*CommonSlots(*same), 4);
  EXPECT_EQ(*CommonSlots(*ParseHostfile("a\nb\n", "hf")), 0);
  auto differ = CommonSlots(*ParseHostfile("a slots=4\nb slots=8\n", "hf"));
  ASSERT_FALSE(differ.ok());
  EXPECT_NE(differ.error().message.find("hf:2: b has slots=8 but hf:1: a has slots=4"), std::string::npos);
  EXPECT_FALSE(CommonSlots(*ParseHostfile("a slots=4\nb\n", "hf")).ok());
}

}  // namespace
}  // namespace primus::runtime
