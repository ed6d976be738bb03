// The public Primus project's documented command lines, through the real
// binary: what each of its options means here, as a user notices it (the
// plan of --dry-run, the workers' environment and arguments, the files
// written, the exit code and message).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

class PrimusCompatTest : public ::testing::Test {
 protected:
  ProcessOptions Isolated() const {
    ProcessOptions options = IsolatedOptions(dir_.path(), {"PRIMUS_BENCHMARK_CORRUPT_RANK", "GLOO_SOCKET_IFNAME",
                                                           "OMP_NUM_THREADS", "NCCL_DEBUG", "HF_TOKEN", "FROM_FILE"});
    options.timeout_s = 120;
    return options;
  }
  ProcessResult Run(const std::vector<std::string>& args) const { return RunPrimus(args, Isolated()); }
  ProcessResult Run(const std::string& line) const { return Run(Split(line, ' ')); }
  std::string Read(const std::string& relative) const {
    auto text = ReadFile(dir_.path() + "/" + relative);
    return text.ok() ? *text : "";
  }
  TempDir dir_;
};

// ---- direct ----

TEST_F(PrimusCompatTest, SingleIsOneWorkerAndConflictsAreRefused) {
  ProcessResult one = Run({"direct", "--single", "--", "run", "/bin/sh", "-c", "echo world=$WORLD_SIZE local=$LOCAL_WORLD_SIZE"});
  ASSERT_EQ(one.exit_code, 0) << one.all();
  EXPECT_NE(one.out.find("world=1 local=1"), std::string::npos) << one.out;
  std::regex lines("world=");
  EXPECT_EQ(std::distance(std::sregex_iterator(one.out.begin(), one.out.end(), lines), std::sregex_iterator()), 1);

  ProcessResult plan = Run("--dry-run direct --single -- run true");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("direct.nproc_per_node          1                              flag --single"), std::string::npos)
      << plan.out;

  ProcessResult conflict = Run("direct --single --nproc-per-node 2 -- run true");
  EXPECT_EQ(conflict.exit_code, 2) << conflict.all();
  EXPECT_NE(conflict.err.find("--single runs one worker on this node alone, but --nproc-per-node 2 asks for more"),
            std::string::npos)
      << conflict.err;
}

TEST_F(PrimusCompatTest, ScriptRunsAsEachWorkerWithTheArgumentsAfterTheSeparator) {
  dir_.Write("debug_run.py", "import os, sys\nprint('script rank', os.environ['RANK'], 'args', ' '.join(sys.argv[1:]))\n");
  ProcessResult two = Run("direct --nproc-per-node 2 --script debug_run.py -- --arg1 val1");
  ASSERT_EQ(two.exit_code, 0) << two.all();
  EXPECT_NE(two.out.find("script rank 0 args --arg1 val1"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("script rank 1 args --arg1 val1"), std::string::npos) << two.out;

  ProcessResult single = Run("direct --single --script debug_run.py -- train pretrain --config exp.yaml");
  ASSERT_EQ(single.exit_code, 0) << single.all();
  EXPECT_NE(single.out.find("script rank 0 args train pretrain --config exp.yaml"), std::string::npos) << single.out;
  EXPECT_EQ(single.out.find("script rank 1"), std::string::npos);

  ProcessResult plan = Run("--dry-run direct --script debug_run.py -- --arg1 val1");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("note: direct --script debug_run.py: the task is `run python3 debug_run.py`"), std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("task arguments: python3 debug_run.py --arg1 val1"), std::string::npos) << plan.out;
}

TEST_F(PrimusCompatTest, NumaAndNoNumaSetTheBinding) {
  ProcessResult on = Run("--dry-run direct --numa -- run true");
  ASSERT_EQ(on.exit_code, 0) << on.all();
  EXPECT_NE(on.out.find("direct.numa_bind               true                           flag --numa"), std::string::npos)
      << on.out;
  EXPECT_NE(on.out.find("cpu binding (--numa-bind):"), std::string::npos) << on.out;
  ProcessResult off = Run("--dry-run --set direct.numa_bind=true direct --no-numa -- run true");
  ASSERT_EQ(off.exit_code, 0) << off.all();
  EXPECT_NE(off.out.find("direct.numa_bind               false                          flag --no-numa"), std::string::npos)
      << off.out;
  EXPECT_EQ(off.out.find("cpu binding"), std::string::npos) << off.out;
}

TEST_F(PrimusCompatTest, EnvFileSetsVariablesBelowExplicitOnesAndItsSecretsStayHidden) {
  dir_.Write("cluster.env", "# site settings\nexport NCCL_DEBUG=INFO\nFROM_FILE='kept $literally'\nHF_TOKEN=hf_filesecret123\n");
  ProcessResult run = Run({"direct", "--env", "NCCL_DEBUG=WARN", "--env", "cluster.env", "--", "run", "/bin/sh", "-c",
                           "echo \"debug=$NCCL_DEBUG file=$FROM_FILE token_set=${HF_TOKEN:+yes}\""});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  EXPECT_NE(run.out.find("debug=WARN file=kept $literally token_set=yes"), std::string::npos) << run.all();

  ProcessResult plan = Run("--dry-run direct --env cluster.env --env NCCL_DEBUG=WARN -- run true");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_EQ(plan.all().find("hf_filesecret123"), std::string::npos) << plan.all();
  EXPECT_NE(plan.out.find("HF_TOKEN=<redacted>"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("flag --env cluster.env:3"), std::string::npos) << "each value names its line: " << plan.out;
  EXPECT_NE(plan.out.find("NCCL_DEBUG=WARN                flag --env\n"), std::string::npos) << plan.out;

  dir_.Write("bad.env", "A=1\nB = 2\n");
  ProcessResult bad = Run("direct --env bad.env -- run true");
  EXPECT_EQ(bad.exit_code, 3) << bad.all();
  EXPECT_NE(bad.err.find("bad.env:2: no spaces are allowed before '='"), std::string::npos) << bad.err;
  ProcessResult missing = Run("direct --env NOT_A_FILE -- run true");
  EXPECT_EQ(missing.exit_code, 2) << missing.all();
  EXPECT_NE(missing.err.find("--env 'NOT_A_FILE': neither NAME=VALUE nor a file that exists"), std::string::npos)
      << missing.err;
}

TEST_F(PrimusCompatTest, LogFileGetsEverythingPrintedAndNothingUnderDryRun) {
  ProcessResult dry = Run("--dry-run direct --log_file logs/run.log -- run true");
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("log file: logs/run.log would receive a copy of everything printed"), std::string::npos);
  EXPECT_FALSE(PathExists(dir_.path() + "/logs"));

  // Rank 1 fails only once rank 0 has printed (its failure stops rank 0, which under load may not have started yet).
  ProcessResult run = Run({"direct", "--nproc-per-node", "2", "--log_file", "logs/run.log", "--", "run", "/bin/sh", "-c",
                           "echo out of rank $RANK; echo err of rank $RANK >&2; "
                           "if [ $RANK = 0 ]; then : > rank0-printed; exit 0; fi; "
                           "i=0; while [ ! -e rank0-printed ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; exit 1"});
  EXPECT_EQ(run.exit_code, 1) << run.all();
  EXPECT_NE(run.out.find("out of rank 0"), std::string::npos) << "the terminal keeps its output: " << run.all();
  std::string log = Read("logs/run.log");
  for (const char* text : {"out of rank 0", "out of rank 1", "err of rank 1", "[INFO]", "[ERROR]"}) {
    EXPECT_NE(log.find(text), std::string::npos) << text << " in:\n" << log;
  }
  EXPECT_EQ(log.find("\033["), std::string::npos) << "no colour codes in the file";
}

// Primus's --silent: nothing on stdout, the launcher's log on stderr, the log file complete.
TEST_F(PrimusCompatTest, SilentKeepsStdoutEmptyButTheLogFileFull) {
  ProcessResult run = Run({"direct", "--silent", "--log_file", "logs/quiet.log", "--", "run", "/bin/sh", "-c",
                           "echo out of the worker; echo err of the worker >&2"});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  EXPECT_EQ(run.out, "") << run.out;
  EXPECT_NE(run.err.find("[INFO]"), std::string::npos) << "the launcher's log stays: " << run.err;
  std::string log = Read("logs/quiet.log");
  EXPECT_NE(log.find("out of the worker"), std::string::npos) << log;
  EXPECT_NE(log.find("err of the worker"), std::string::npos) << log;
  // Primus's runner spelling through a container-less chain: the plan says how it was read.
  ProcessResult plan = Run("--dry-run container --image alpine -- --silent --log_file x.log -- run true");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("read as 'container ... -- direct --silent'"), std::string::npos) << plan.out;
}

TEST_F(PrimusCompatTest, HelpAfterTheSeparatorListsTheTasks) {
  ProcessResult help = Run("direct -- --help");
  EXPECT_EQ(help.exit_code, 0) << help.all();
  for (const char* text : {"tasks (what runs after '--')", "benchmark", "preflight", "train", "direct -- <task> --help"}) {
    EXPECT_NE(help.out.find(text), std::string::npos) << text << " in:\n" << help.out;
  }
}

// ---- benchmark (OpenBLAS and gloo on the CPU here, with small sizes) ----

const char kSmallDense[] =
    "--seqlen 32 --hidden-size 64 --intermediate-size 96 --num-attention-heads 2 --num-key-value-heads 1 --head-dim 32 "
    "--vocab-size 128";

TEST_F(PrimusCompatTest, GemmDenseRunsTheModelsShapesAndWritesTheReport) {
  ProcessResult plan = Run("--dry-run direct -- benchmark gemm-dense --model Llama3.1_8B --device cpu");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  for (const char* shape : {"attn_qkv.fwd 6144x8192x4096 TN", "attn_qkv.wgrad 4096x6144x8192 NT",
                            "attn_qkv.dgrad 4096x8192x6144 NN", "mlp_up.fwd 28672x8192x4096 TN", "vocab.fwd 128256x8192x4096 TN"}) {
    EXPECT_NE(plan.out.find("  " + std::string(shape) + "\n"), std::string::npos) << shape << " in:\n" << plan.out;
  }
  EXPECT_NE(plan.out.find("benchmark gemm-dense: Llama3.1_8B on the CPU (OpenBLAS): 15 shape(s)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("--duration 3"), std::string::npos) << "Primus's 3 s per shape: " << plan.out;

  ProcessResult run = Run("benchmark gemm-dense " + std::string(kSmallDense) +
                          " --mbs 2 --iters 1 --warmup 0 --device cpu --output-file out/dense.md");
  ASSERT_EQ(run.exit_code, 0) << run.all();
  // 64 tokens; qkv: (2 + 2x1) heads x 32 = 128 outputs of 64 inputs.
  EXPECT_NE(run.out.find("attn_qkv.fwd "), std::string::npos) << run.out;
  std::regex qkv(R"(attn_qkv\.fwd +0 +\S+ +cpu: .* +128 +64 +64 +TN +fp32\(bf16\) +1 )");
  EXPECT_TRUE(std::regex_search(run.out, qkv)) << run.out;
  std::string report = Read("out/dense.md");
  EXPECT_TRUE(report.starts_with("# benchmark gemm-dense: custom dimensions\n")) << report;
  EXPECT_NE(report.find("- hidden_size: 64\n"), std::string::npos) << report;
  // The columns of --csv and the JSON: ... m | n | k | trans_a | trans_b | dtype_requested | dtype_used ... name.
  std::regex dgrad(R"(\| 64 \| 64 \| 128 \| 0 \| 0 \| bf16 \| fp32 \| .* \| vocab\.dgrad \|\n)");
  EXPECT_TRUE(std::regex_search(report, dgrad)) << report;
  std::regex rows(R"(\n\| 0 \| [^|]+ \| cpu)");
  EXPECT_EQ(std::distance(std::sregex_iterator(report.begin(), report.end(), rows), std::sregex_iterator()), 15) << report;
}

TEST_F(PrimusCompatTest, GemmDeepseekShapesAndPresetErrors) {
  ProcessResult plan = Run("--dry-run direct -- benchmark gemm-deepseek --model deepseek_v3 --device cpu");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  for (const char* shape : {"attn_q_down.fwd 1536x4096x7168 TN", "attn_kv_down.fwd 576x4096x7168 TN",
                            "router.fwd 256x4096x7168 TN", "moe_gateup.fwd 4096x128x7168 TN", "vocab.fwd 129280x4096x7168 TN"}) {
    EXPECT_NE(plan.out.find("  " + std::string(shape) + "\n"), std::string::npos) << shape << " in:\n" << plan.out;
  }
  EXPECT_NE(plan.out.find("33 shape(s)"), std::string::npos) << plan.out;

  ProcessResult run = Run(
      "benchmark gemm-deepseek --seqlen 32 --hidden-size 64 --intermediate-size 64 --kv-lora-rank 16 "
      "--moe-intermediate-size 32 --num-attention-heads 2 --num-experts-per-tok 2 --n-routed-experts 4 "
      "--qk-nope-head-dim 16 --qk-rope-head-dim 8 --v-head-dim 16 --vocab-size 64 --iters 1 --warmup 0 --device cpu "
      "--json");
  ASSERT_EQ(run.exit_code, 0) << run.all();
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.out;
  ASSERT_EQ(report["results"].size(), 30u) << "10 layers (attn_q without a q_lora_rank) x 3 phases";
  EXPECT_EQ(report["results"][0]["name"], "attn_q.fwd");
  bool moe_found = false;
  for (const auto& r : report["results"]) {
    if (r["name"] == "moe_down.fwd") {
      moe_found = true;
      EXPECT_EQ(r["n"], 16) << "32 tokens x 2 per token / 4 experts";
    }
  }
  EXPECT_TRUE(moe_found);

  ProcessResult unknown = Run("benchmark gemm-deepseek --model Deepseek_V4 --device cpu");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.all();
  EXPECT_NE(unknown.err.find("unknown --model 'Deepseek_V4'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("Deepseek_V3"), std::string::npos);
}

TEST_F(PrimusCompatTest, GemmOutputFileFormatFollowsTheName) {
  ProcessResult run = Run("benchmark gemm --M 64 --N 32 --K 16 --trans_b --iters 2 --device cpu --output-file r.jsonl");
  ASSERT_EQ(run.exit_code, 0) << run.all();
  std::vector<std::string> lines = Split(Trim(Read("r.jsonl")), '\n');
  ASSERT_EQ(lines.size(), 1u) << Read("r.jsonl");
  nlohmann::json row = nlohmann::json::parse(lines[0], nullptr, false);
  EXPECT_EQ(row["m"], 64);
  EXPECT_EQ(row["k"], 16);
  EXPECT_TRUE(row["trans_b"].get<bool>());
  EXPECT_NE(run.out.find("TFLOPS"), std::string::npos) << "stdout keeps its table";
  ProcessResult again = Run("benchmark gemm -M 32 --iters 1 --device cpu --output-file r.jsonl --append");
  ASSERT_EQ(again.exit_code, 0) << again.all();
  EXPECT_EQ(Split(Trim(Read("r.jsonl")), '\n').size(), 2u);

  ProcessResult csv = Run("benchmark gemm -M 32 --iters 1 --device cpu --output-file sub/r.csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.all();
  // One set of field names in every format: the file's columns are --csv's and the JSON's.
  EXPECT_TRUE(Read("sub/r.csv").starts_with("rank,host,device,device_id,library,m,n,k,trans_a,trans_b,dtype_requested,"
                                            "dtype_used,iterations,mean_ms,"))
      << Read("sub/r.csv");
  ProcessResult stdout_csv = Run("benchmark gemm -M 32 --iters 1 --device cpu --csv");
  EXPECT_EQ(Split(stdout_csv.out, '\n').front(), Split(Read("sub/r.csv"), '\n').front());
  ProcessResult txt = Run("benchmark gemm --output-file r.txt --device cpu");
  EXPECT_EQ(txt.exit_code, 2) << txt.all();
  EXPECT_NE(txt.err.find("--output-file r.txt: the name must end in .md, .csv, .tsv, .json or .jsonl"), std::string::npos);
}

TEST_F(PrimusCompatTest, RcclRunsAsCommAndWritesItsReport) {
  ProcessResult plan = Run({"--dry-run", "direct", "--nproc-per-node", "2", "--", "benchmark", "rccl", "--op", "all_reduce",
                            "all_gather", "--min-bytes", "1K", "--max-bytes", "4K", "--device", "cpu"});
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("runs as: benchmark comm --op all_reduce,all_gather --sizes 1024,2048,4096 --dtype bf16 --warmup 20 --iters 100 -c 0 "
                          "--device cpu"),
            std::string::npos)
      << plan.out;

  ProcessResult run = Run({"direct", "--nproc-per-node", "2", "--", "benchmark", "rccl", "--op", "all_reduce", "all_gather",
                           "--sizes", "1K,4K", "--iters", "2", "--warmup", "1", "--check", "--dtype", "fp32", "--device", "cpu",
                           "--output-file", "out/rccl.md", "--cluster", "lab-a"});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  EXPECT_NE(run.out.find("# Collective test starting: all_reduce_perf"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# Collective test starting: all_gather_perf"), std::string::npos) << run.out;
  std::string report = Read("out/rccl.md");
  EXPECT_TRUE(report.starts_with("# benchmark rccl\n")) << report;
  EXPECT_NE(report.find("- cluster: lab-a\n"), std::string::npos) << report;
  EXPECT_NE(report.find("- ranks: 2\n"), std::string::npos) << report;
  EXPECT_NE(report.find("- results checked\n"), std::string::npos) << report;
  for (const char* row : {"| allreduce | 1024 | 256 | float |", "| allreduce | 4096 |", "| allgather | 1024 | 128 | float |"}) {
    EXPECT_NE(report.find(row), std::string::npos) << row << " in:\n" << report;
  }

  ProcessResult refused = Run("benchmark rccl --per-rank --device cpu");
  EXPECT_EQ(refused.exit_code, 2) << refused.all();
  EXPECT_NE(refused.err.find("benchmark rccl: --per-rank is not available here"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("# Slowest rank"), std::string::npos) << "names what we have instead: " << refused.err;
}

TEST_F(PrimusCompatTest, StridedAllgatherRunsEachGroupOfEveryNthRank) {
  for (const char* parallel : {"", " --parallel"}) {
    ProcessResult run = Run("direct --nproc-per-node 4 -- benchmark strided-allgather --sizes-mb 1 --stride 2 --iters 2 "
                            "--warmup 1 --backend gloo" + std::string(parallel));
    ASSERT_EQ(run.exit_code, 0) << parallel << "\n" << run.all();
    size_t group0 = run.out.find("# Group 0 of 2 (--stride 2): ranks 0,2, numbered 0 to 1 in this table\n");
    size_t group1 = run.out.find("# Group 1 of 2 (--stride 2): ranks 1,3, numbered 0 to 1 in this table\n");
    ASSERT_NE(group0, std::string::npos) << run.out;
    ASSERT_NE(group1, std::string::npos) << run.out;
    EXPECT_LT(group0, group1) << "in group order";
    std::regex row(R"(\n +1048576 +262144 +bfloat16 +none +-1 )");
    EXPECT_EQ(std::distance(std::sregex_iterator(run.out.begin(), run.out.end(), row), std::sregex_iterator()), 2)
        << "one row per group, each rank sending 1 MiB:\n" << run.out;
  }
  ProcessResult indivisible = Run("direct --nproc-per-node 2 -- benchmark strided-allgather --device cpu");
  EXPECT_EQ(indivisible.exit_code, 2) << indivisible.all();
  EXPECT_NE(indivisible.err.find("--stride 8 needs a world size that is a multiple of 8, and this job has 2 ranks"),
            std::string::npos)
      << indivisible.err;
}

// ---- preflight ----

TEST_F(PrimusCompatTest, PreflightQuickPerfTestTestsAndCommSizes) {
  ProcessResult quick = Run("--dry-run preflight --quick");
  ASSERT_EQ(quick.exit_code, 0) << quick.all();
  EXPECT_NE(quick.out.find("checks: perf: gemm (bf16 8192^3, 10 iterations), all-reduce at 64, 1024 MiB, inter-node "
                           "all-reduce at 64, 1024 MiB\n"),
            std::string::npos)
      << quick.out;
  ProcessResult perf_test = Run("--dry-run preflight --perf-test --comm-sizes-mb 2,4");
  ASSERT_EQ(perf_test.exit_code, 0) << perf_test.all();
  EXPECT_NE(perf_test.out.find("checks: perf: gemm (bf16 8192^3, 20 iterations), all-reduce at 2, 4 MiB\n"), std::string::npos)
      << perf_test.out;
  ProcessResult sizes_alone = Run("--dry-run preflight --comm-sizes-mb 128");
  EXPECT_NE(sizes_alone.out.find("checks: host; gpu; network; software; perf: gemm (bf16 8192^3, 20 iterations), all-reduce at 128 MiB"),
            std::string::npos)
      << sizes_alone.out;

  // This host has no GPU: each selected test says so, and only those.
  ProcessResult tests = Run("preflight --tests gemm,intra-alltoall");
  ASSERT_EQ(tests.exit_code, 0) << tests.all();
  EXPECT_NE(tests.out.find("SKIP  perf  gemm"), std::string::npos) << tests.out;
  EXPECT_NE(tests.out.find("SKIP  perf  intra-alltoall"), std::string::npos) << tests.out;
  EXPECT_EQ(tests.out.find("all-reduce"), std::string::npos) << tests.out;
  EXPECT_EQ(tests.out.find("  host  "), std::string::npos) << "perf only, as in Primus: " << tests.out;

  // On a host with 8 GPUs the screen runs benchmark gemm and comm at those sizes.
  ProcessOptions gpus = Isolated();
  std::string root = std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/mi300x-8";
  gpus.env["PRIMUS_SYSFS_ROOT"] = root + "/sys";
  gpus.env["PRIMUS_PROCFS_ROOT"] = root + "/proc";
  gpus.env["PRIMUS_ETC_ROOT"] = root + "/etc";
  ProcessResult fixture = RunPrimus({"preflight", "--quick"}, gpus);
  EXPECT_EQ(fixture.exit_code, 1) << "a fixture has no real GPU to measure: " << fixture.all();
  EXPECT_NE(fixture.out.find("benchmark comm --device gpu --op allreduce --sizes 64M,1024M -n 5 -w 1 -c 1"), std::string::npos)
      << fixture.out;

  // One node: the inter-node tests are skipped, saying so; group sizes other
  // than the full node/job are accepted with a warning.
  ProcessResult inter = Run("preflight --tests inter-allreduce,inter-p2p --inter-group-sizes 2,all");
  EXPECT_EQ(inter.exit_code, 0) << inter.all();
  EXPECT_NE(inter.out.find("SKIP  perf  inter-allreduce"), std::string::npos) << inter.out;
  EXPECT_NE(inter.out.find("one node: nothing between nodes"), std::string::npos) << inter.out;
  EXPECT_NE(inter.err.find("--inter-group-sizes 2,all: the inter-node collectives run across every node"),
            std::string::npos)
      << inter.err;
  ProcessResult group = Run("preflight --tests gemm --inter-group-sizes two");
  EXPECT_EQ(group.exit_code, 2) << group.all();
  EXPECT_NE(group.err.find("--inter-group-sizes: 'two' is not a group size or all"), std::string::npos) << group.err;
  ProcessResult inert = Run("preflight --host --comm-sizes-mb 64");
  EXPECT_EQ(inert.exit_code == 0 || inert.exit_code == 1, true) << inert.all();
  EXPECT_NE(inert.err.find("--comm-sizes-mb has no effect without --perf, --quick or --tests"), std::string::npos) << inert.err;
}

}  // namespace
}  // namespace primus::testing
