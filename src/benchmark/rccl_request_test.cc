#include "benchmark/rccl_request.h"

#include <gtest/gtest.h>

#include "util/strings.h"

#include "benchmark/comm_request.h"

namespace primus::benchmark {
namespace {

TEST(RcclRequestTest, PrimusDefaultsBecomeACommCommandLine) {
  auto rccl = TranslateRccl({});
  ASSERT_TRUE(rccl.ok()) << rccl.error().Format();
  auto comm = ParseCommRequest(rccl->comm_args);
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ(comm->ops, std::vector<Collective>{Collective::kAllReduce});
  std::vector<size_t> sizes = RowSizes(*comm);
  ASSERT_EQ(sizes.size(), 18u) << "1K doubling to 128M";
  EXPECT_EQ(sizes.front(), 1024u);
  EXPECT_EQ(sizes.back(), 128u << 20);
  EXPECT_EQ(comm->type, DataType::kBfloat16);
  EXPECT_EQ(comm->warmup, 20);
  EXPECT_EQ(comm->iters, 100);
  EXPECT_EQ(comm->check, 0) << "checked only with --check, as in Primus";
  EXPECT_TRUE(rccl->output_file.empty());
}

TEST(RcclRequestTest, OpsSizesScalesAndFiles) {
  auto rccl = TranslateRccl({"--op", "all_reduce", "all_gather", "alltoall", "--min-bytes", "1M", "--max-bytes", "2M",
                             "--num-sizes", "3", "--scale", "linear", "--dtype", "fp32", "--iters", "5", "--warmup", "1",
                             "--check", "--output-file", "out/rccl.csv", "--append", "--cluster", "lab-a", "--device", "cpu"});
  ASSERT_TRUE(rccl.ok()) << rccl.error().Format();
  auto comm = ParseCommRequest(rccl->comm_args);
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ(comm->ops, (std::vector<Collective>{Collective::kAllReduce, Collective::kAllGather, Collective::kAlltoAll}));
  EXPECT_EQ(RowSizes(*comm), (std::vector<size_t>{1u << 20, (1u << 20) + (1u << 19), 2u << 20}));
  EXPECT_EQ(comm->type, DataType::kFloat);
  EXPECT_EQ(comm->check, 1);
  EXPECT_EQ(comm->device, DeviceChoice::kCpu);
  EXPECT_EQ(rccl->output_file, "out/rccl.csv");
  EXPECT_TRUE(rccl->append);
  EXPECT_EQ(rccl->cluster, "lab-a");
  auto listed = TranslateRccl({"--sizes", "1K,4K", "--op", "broadcast"});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(RowSizes(*ParseCommRequest(listed->comm_args)), (std::vector<size_t>{1024, 4096}));
}

TEST(RcclRequestTest, WhatIsNotHereIsRefusedWithTheEquivalent) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--per-rank"}, {"--repeat", "3"}, {"--per-iter-trace"}, {"--trace-ops", "alltoall"}}) {
    auto rccl = TranslateRccl(args);
    ASSERT_FALSE(rccl.ok()) << args[0];
    EXPECT_EQ(rccl.error().code, ExitCode::kUsage);
    EXPECT_NE(rccl.error().message.find("benchmark rccl: " + args[0] + " is not available here"), std::string::npos);
    EXPECT_FALSE(rccl.error().hint.empty());
  }
  EXPECT_TRUE(TranslateRccl({"--repeat", "1"}).ok()) << "the default changes nothing";
  auto op = TranslateRccl({"--op", "all_reduse"});
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.error().message.find("did you mean"), std::string::npos) << op.error().message;
  EXPECT_FALSE(TranslateRccl({"--dtype", "fp8"}).ok());
  // comm's names of the same types are taken too.
  auto bfloat16 = TranslateRccl({"--dtype", "bfloat16"});
  ASSERT_TRUE(bfloat16.ok()) << bfloat16.error().message;
  EXPECT_NE(ShellJoin(bfloat16->comm_args).find("--dtype bf16"), std::string::npos) << ShellJoin(bfloat16->comm_args);
  EXPECT_FALSE(TranslateRccl({"--output-file", "r.csv.gz"}).ok());
}

TEST(RcclRequestTest, StridedAllgatherIsAllgatherInGroups) {
  auto strided = TranslateStridedAllgather({"--sizes-mb", "1,2", "--stride", "2", "--parallel", "--iters", "3",
                                            "--warmup", "1", "--dtype", "fp32", "--backend", "gloo"});
  ASSERT_TRUE(strided.ok()) << strided.error().Format();
  auto comm = ParseCommRequest(strided->comm_args);
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ(comm->ops, std::vector<Collective>{Collective::kAllGather});
  EXPECT_EQ(RowSizes(*comm), (std::vector<size_t>{1u << 20, 2u << 20}));
  EXPECT_EQ(comm->stride, 2);
  EXPECT_TRUE(comm->parallel_groups);
  EXPECT_EQ(comm->device, DeviceChoice::kCpu) << "gloo runs on the CPU";
  EXPECT_EQ(comm->check, 0);
  auto defaults = TranslateStridedAllgather({});
  ASSERT_TRUE(defaults.ok());
  auto plain = ParseCommRequest(defaults->comm_args);
  EXPECT_EQ(plain->stride, 8);
  EXPECT_FALSE(plain->parallel_groups);
  EXPECT_EQ(RowSizes(*plain), (std::vector<size_t>{64u << 20, 128u << 20, 256u << 20}));
  EXPECT_FALSE(TranslateStridedAllgather({"--backend", "mpi"}).ok());
  EXPECT_FALSE(TranslateStridedAllgather({"--backend", "gloo", "--device", "gpu"}).ok());
}

}  // namespace
}  // namespace primus::benchmark
