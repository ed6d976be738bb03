#include "telemetry/host_sampler.h"

#include <gtest/gtest.h>

#include <fstream>

#include "platform/test_fixtures.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::telemetry {
namespace {

TEST(HostSamplerTest, ParsesTheKernelsFormats) {
  auto times = ParseProcStat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1\n");
  ASSERT_TRUE(times);
  EXPECT_EQ(times->cpus, 2);
  EXPECT_EQ(times->total, 1000u);
  EXPECT_EQ(times->busy, 150u);
  EXPECT_FALSE(ParseProcStat("intr 1\n"));
  auto memory = ParseMeminfo("MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:  400 kB\n");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->total_bytes, 1000 * 1024);
  EXPECT_EQ(memory->used_bytes, 600 * 1024);
  auto stat = ParsePidStat("77 (a) b) c) T 1 77 77 0 -1 0 0 0 0 0 31 11 0 0 20 0 1 0 1 1 1");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'T');
  EXPECT_EQ(stat->cpu_ticks, 42u);
  EXPECT_EQ(StateName('R'), "running");
  EXPECT_EQ(StateName('D'), "disk-sleep");
  EXPECT_EQ(StateName('Z'), "zombie");
  EXPECT_EQ(StateName('X'), "exited");
}

TEST(HostSamplerTest, ReadsTheFixtureHostAndItsWorkers) {
  HostSampler sampler(platform::FixtureRoots("cpu-only"), "eth0");
  HostStats host = sampler.SampleHost(1.0);
  EXPECT_EQ(host.cpus, 2);
  EXPECT_FALSE(host.cpu_percent);  // the first sample has none
  EXPECT_EQ(host.mem_total_bytes, 24634548LL * 1024);
  ASSERT_TRUE(host.mem_used_bytes);
  ASSERT_EQ(host.net.size(), 1u);
  EXPECT_EQ(host.net[0].interface, "eth0");
  EXPECT_EQ(host.net[0].rx_bytes, 123456789u);
  EXPECT_EQ(host.net[0].tx_bytes, 456789012u);
  EXPECT_FALSE(host.net[0].rx_bytes_per_s);

  std::vector<WorkerStats> workers = sampler.SampleWorkers(
      {{0, 0, 4242, true}, {1, 1, 4243, true}, {2, 2, 4244, true}, {3, 3, 4245, true}, {4, 4, 4242, false}}, 1.0);
  ASSERT_EQ(workers.size(), 5u);
  EXPECT_EQ(workers[0].state, "running");
  EXPECT_EQ(workers[0].rss_bytes, 300000LL * 4096);
  EXPECT_FALSE(workers[0].cpu_percent);
  EXPECT_EQ(workers[1].state, "disk-sleep");  // a command name with ") " in it
  EXPECT_EQ(workers[2].state, "zombie");
  EXPECT_EQ(workers[3].state, "exited");      // no such process
  EXPECT_FALSE(workers[3].rss_bytes);
  EXPECT_EQ(workers[4].state, "exited");      // the agent saw it end
}

TEST(HostSamplerTest, RatesComeFromTwoSamples) {
  ScopedTempDir dir;
  std::string proc = dir.path() + "/proc";
  ASSERT_TRUE(MakeDirs(proc + "/net").ok());
  ASSERT_TRUE(MakeDirs(proc + "/10").ok());
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(proc + "/" + name) << text; };
  auto state = [&](int busy, int idle, int rx, int tx, int ticks) {
    write("stat", "cpu  " + std::to_string(busy) + " 0 0 " + std::to_string(idle) + " 0 0 0 0\ncpu0 0\ncpu1 0\ncpu2 0\ncpu3 0\n");
    write("net/dev", "h\nh\n  eth1: " + std::to_string(rx) + " 0 0 0 0 0 0 0 " + std::to_string(tx) + " 0 0 0 0 0 0 0\n");
    write("10/stat", "10 (w) R 1 10 10 0 -1 0 0 0 0 0 " + std::to_string(ticks) + " 0 0 0 20 0 1 0 1 1 1");
    write("10/statm", "10 5 1 1 0 1 0");
  };
  platform::Roots roots;
  roots.procfs = proc;
  HostSampler sampler(roots, "eth1");
  state(0, 0, 1000, 2000, 0);
  sampler.SampleHost(10.0);
  sampler.SampleWorkers({{0, 0, 10, true}}, 10.0);
  state(300, 100, 3000, 2500, 100);  // 3 of 4 ticks busy on 4 CPUs: 300 % of one core
  HostStats host = sampler.SampleHost(12.0);
  ASSERT_TRUE(host.cpu_percent);
  EXPECT_DOUBLE_EQ(*host.cpu_percent, 300.0);
  EXPECT_DOUBLE_EQ(*host.net[0].rx_bytes_per_s, 1000.0);
  EXPECT_DOUBLE_EQ(*host.net[0].tx_bytes_per_s, 250.0);
  std::vector<WorkerStats> workers = sampler.SampleWorkers({{0, 0, 10, true}}, 12.0);
  ASSERT_TRUE(workers[0].cpu_percent);
  // 100 ticks in 2 s: 50 % of a core at the usual 100 ticks per second.
  EXPECT_NEAR(*workers[0].cpu_percent, 100.0 / static_cast<double>(sysconf(_SC_CLK_TCK)) / 2 * 100, 1e-9);
}

}  // namespace
}  // namespace primus::telemetry
