#include "util/hostlist.h"

#include <gtest/gtest.h>

#include <ctime>
#include <cstdint>
#include <random>

#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"
#include "run_process.h"

namespace primus {
namespace {

std::vector<std::string> Expand(const std::string& expression) {
  auto hosts = ExpandHostlist(expression);
  EXPECT_TRUE(hosts.ok()) << expression << ": " << (hosts.ok() ? "" : hosts.error().Format());
  return hosts.ok() ? *hosts : std::vector<std::string>{};
}

TEST(HostlistTest, RangesListsPaddingAndSeveralGroups) {
  EXPECT_EQ(Expand("node[01-04,07],gpu-a[1-2]"),
            (std::vector<std::string>{"node01", "node02", "node03", "node04", "node07", "gpu-a1", "gpu-a2"}));
  EXPECT_EQ(Expand("x[1-2]-y[3-4]"), (std::vector<std::string>{"x1-y3", "x1-y4", "x2-y3", "x2-y4"}));
  EXPECT_EQ(Expand("n[8-10]"), (std::vector<std::string>{"n8", "n9", "n10"}));
  EXPECT_EQ(Expand("n[1-003]"), (std::vector<std::string>{"n1", "n2", "n3"})) << "the lower bound sets the width";
  EXPECT_EQ(Expand("n[2,1]"), (std::vector<std::string>{"n2", "n1"})) << "order is kept, as scontrol keeps it";
  EXPECT_EQ(Expand("n[08-10]"), (std::vector<std::string>{"n08", "n09", "n10"}));
  EXPECT_EQ(Expand("single"), (std::vector<std::string>{"single"}));
  EXPECT_EQ(Expand("a,b,,c"), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(HostlistTest, MalformedExpressionsAreNamed) {
  for (const char* bad : {"node[1-2", "node1-2]", "node[a-b]", "node[5-1]", "node[[1]]", "node[]", "node[1-2]a"}) {
    auto hosts = ExpandHostlist(bad);
    ASSERT_FALSE(hosts.ok()) << bad;
    EXPECT_NE(hosts.error().message.find(bad), std::string::npos) << hosts.error().message;
  }
}

TEST(HostlistTest, HugeListsAreCountedAndIndexedWithoutBeingExpanded) {
  std::clock_t start = std::clock();  // CPU time, whatever else the machine runs
  Result<Hostlist> list = Hostlist::Parse("a[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]");
  ASSERT_TRUE(list.ok()) << list.error().Format();
  EXPECT_EQ(list->size(), 100000000u);
  EXPECT_EQ(list->Host(0), "a00000000");
  EXPECT_EQ(list->Host(12345678), "a12345678");
  EXPECT_EQ(list->Host(99999999), "a99999999");
  EXPECT_EQ(*FirstHost(" a[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9] "), "a00000000");
  // Past 2^64 the count saturates; the first host is still right.
  Result<Hostlist> beyond = Hostlist::Parse("n[0-999999][0-999999][0-999999][0-999999]");
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->size(), UINT64_MAX);
  EXPECT_EQ(beyond->Host(1000001), "n0011") << "the last group varies fastest";
  EXPECT_LT(std::clock() - start, CLOCKS_PER_SEC / 10);
}

TEST(HostlistTest, FullExpansionIsCappedWithAClearError) {
  Result<std::vector<std::string>> hosts = ExpandHostlist("a[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]");
  ASSERT_FALSE(hosts.ok());
  EXPECT_EQ(hosts.error().code, ExitCode::kUsage);
  EXPECT_EQ(hosts.error().message,
            "host list 'a[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]' names 100000000 hosts, more than the 100000 that "
            "can be listed");
  EXPECT_NE(ExpandHostlist("n[0-999999][0-999999][0-999999][0-999999]").error().message.find("more than 2^64 hosts"),
            std::string::npos);
  EXPECT_EQ(ExpandHostlist("n[1-100000]")->size(), 100000u) << "the cap itself is allowed";
  EXPECT_FALSE(ExpandHostlist("n[1-100000],m").ok());
  ASSERT_FALSE(FirstHost(",,").ok());
  EXPECT_NE(FirstHost(",,").error().message.find("names no host"), std::string::npos);
}

TEST(HostlistTest, LongListsExpandInLinearTime) {
  // 60,000 items, and one group of 60,000 single numbers: each host is found
  // without walking the items or ranges before it.
  std::string items, numbers;
  for (int i = 0; i < 60000; ++i) {
    items += (i ? ",h" : "h") + std::to_string(i);
    numbers += (i ? "," : "") + std::to_string(i);
  }
  std::clock_t start = std::clock();
  Result<std::vector<std::string>> many_items = ExpandHostlist(items);
  Result<std::vector<std::string>> many_ranges = ExpandHostlist("g[" + numbers + "]");
  EXPECT_LT(std::clock() - start, CLOCKS_PER_SEC);
  ASSERT_TRUE(many_items.ok() && many_ranges.ok());
  EXPECT_EQ(many_items->back(), "h59999");
  EXPECT_EQ(many_ranges->at(31234), "g31234");
  // Messages about a long expression show its start only.
  Result<std::vector<std::string>> bad = ExpandHostlist(items + ",x[");
  ASSERT_FALSE(bad.ok());
  EXPECT_LT(bad.error().message.size(), 300u) << bad.error().message;
}

TEST(HostlistTest, EveryIndexAgreesWithTheExpansion) {
  for (const char* expression : {"node[01-04,07],gpu-a[1-2]", "x[1-2]-y[3-4,9]z[7,05-06]", "a,b[1-3],c"}) {
    Result<Hostlist> list = Hostlist::Parse(expression);
    ASSERT_TRUE(list.ok()) << expression;
    std::vector<std::string> expanded = Expand(expression);
    ASSERT_EQ(list->size(), expanded.size()) << expression;
    for (size_t i = 0; i < expanded.size(); ++i) EXPECT_EQ(list->Host(i), expanded[i]) << expression << " " << i;
  }
}

// A random expression Slurm accepts: 1-3 items, each a prefix with 0-2
// bracket groups of numbers and ranges (padded or not) and an optional suffix.
std::string RandomExpression(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto number = [&](int value, int width) {
    std::string digits = std::to_string(value);
    while (static_cast<int>(digits.size()) < width) digits.insert(0, "0");
    return digits;
  };
  std::vector<std::string> items;
  for (int item = 0, items_wanted = 1 + pick(3); item < items_wanted; ++item) {
    std::string text = std::string(1, static_cast<char>('a' + pick(26))) + (pick(2) ? "pu-" : "n");
    for (int group = 0, groups = pick(3); group < groups; ++group) {
      std::vector<std::string> parts;
      for (int part = 0, count = 1 + pick(3); part < count; ++part) {
        int low = pick(15), width = 1 + pick(3);
        if (pick(2)) parts.push_back(number(low, width));
        else parts.push_back(number(low, width) + "-" + number(low + pick(12), 1 + pick(3)));
      }
      text += "[" + Join(parts, ",") + "]";
      if (group + 1 < groups && pick(2)) text += "-r";
    }
    if (pick(3) == 0) text += "x";
    items.push_back(text);
  }
  return Join(items, ",");
}

TEST(HostlistTest, AgreesWithScontrolShowHostnames) {
  if (FindExecutable("scontrol").empty()) GTEST_SKIP() << "scontrol not installed (scripts/setup.sh installs slurm-client)";
  ScopedTempDir dir("hostlist");
  // scontrol reads a configuration even to expand a host list; no daemon is needed.
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/slurm.conf",
                              "ClusterName=t\nSlurmctldHost=localhost\nAuthType=auth/none\nCredType=cred/none\n"
                              "NodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n")
                  .ok());
  testing::ProcessOptions options;
  options.env["SLURM_CONF"] = dir.path() + "/slurm.conf";
  options.timeout_s = 10;
  std::mt19937 rng(20261122);
  int compared = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string expression = RandomExpression(rng);
    testing::ProcessResult slurm = testing::RunProcess({"scontrol", "show", "hostnames", expression}, options);
    auto ours = ExpandHostlist(expression);
    // scontrol reports "Invalid hostlist" on stderr, still exiting 0.
    if (slurm.exit_code != 0 || slurm.err.find("Invalid hostlist") != std::string::npos) {
      EXPECT_FALSE(ours.ok()) << expression << ": scontrol refused it (" << slurm.err << ") but we accepted it";
      ++refused;
      continue;
    }
    ASSERT_TRUE(ours.ok()) << expression << ": " << ours.error().Format();
    std::vector<std::string> expected = Split(std::string(Trim(slurm.out)), '\n');
    EXPECT_EQ(*ours, expected) << expression;
    ++compared;
  }
  // Both kinds must really occur: expansions compared, and refusals agreed on.
  EXPECT_GT(compared, 150);
  EXPECT_GT(refused, 30);
}

}  // namespace
}  // namespace primus
