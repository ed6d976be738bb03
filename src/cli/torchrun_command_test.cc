// torchrun's command line read as ours: every flag of torch 2.x in both
// spellings, PET_* variables, the worker command, what is accepted as not
// needed, and what is refused (with the flag named).
#include "cli/torchrun_command.h"

#include <gtest/gtest.h>

#include <optional>

#include "util/strings.h"

namespace primus::cli {
namespace {

using Level = TorchrunNote::Level;

TorchrunRequest Inputs(const std::vector<std::string>& args, Environment env = {}) {
  return TorchrunRequest{args, std::move(env), "20261125-101010-abcdef"};
}

TorchrunCommand Read(const std::vector<std::string>& args, Environment env = {}) {
  auto command = ReadTorchrunCommand(Inputs(args, std::move(env)));
  EXPECT_TRUE(command.ok()) << Join(args, " ") << "\n" << (command.ok() ? "" : command.error().Format());
  return command.ok() ? *command : TorchrunCommand{};
}

Error ReadError(const std::vector<std::string>& args, Environment env = {}) {
  auto command = ReadTorchrunCommand(Inputs(args, std::move(env)));
  EXPECT_FALSE(command.ok()) << Join(args, " ");
  return command.ok() ? Error{} : command.error();
}

// The value a key gets, and from where ("--nnodes", "PET_NNODES").
struct Setting {
  std::string value, source;
  bool from_environment = false;
};
std::optional<Setting> Find(const std::vector<config::FlagSetting>& settings, const std::string& key) {
  std::optional<Setting> found;
  for (const auto& setting : settings) {
    if (setting.key == key) found = Setting{setting.values.back(), setting.flag, setting.from_environment};
  }
  return found;
}
std::string Value(const TorchrunCommand& command, const std::string& key) {
  auto found = Find(command.settings, key);
  return found ? found->value : "<unset>";
}
std::string DefaultValue(const TorchrunCommand& command, const std::string& key) {
  auto found = Find(command.defaults, key);
  return found ? found->value : "<unset>";
}
bool HasNote(const TorchrunCommand& command, Level level, const std::string& part) {
  for (const TorchrunNote& note : command.notes) {
    if (note.level == level && note.text.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(TorchrunCommandTest, PlainScriptRunsUnderPythonWithTorchrunsDefaults) {
  TorchrunCommand command = Read({"train.py", "--lr", "3e-4"});
  EXPECT_EQ(command.worker_argv, (std::vector<std::string>{"python3", "-u", "train.py", "--lr", "3e-4"}));
  EXPECT_TRUE(command.settings.empty());
  EXPECT_EQ(DefaultValue(command, "direct.nproc_per_node"), "1");
  EXPECT_EQ(DefaultValue(command, "direct.platform"), "none");
  EXPECT_EQ(DefaultValue(command, "direct.omp_num_threads"), "torchrun");
  EXPECT_EQ(DefaultValue(command, "direct.worker_stderr"), "stderr");
  EXPECT_EQ(DefaultValue(command, "direct.master_port"), "<unset>");  // one node: a free port
  EXPECT_TRUE(HasNote(command, Level::kPlan, "python: python3 from PATH ("));
  EXPECT_TRUE(HasNote(command, Level::kPlan, "PYTHON_EXEC is not set"));
  EXPECT_TRUE(HasNote(command, Level::kPlan, "MASTER_PORT is a free port"));
}

TEST(TorchrunCommandTest, PythonExecChoosesTheInterpreter) {
  TorchrunCommand command = Read({"t.py"}, {{"PYTHON_EXEC", "/opt/py/bin/python"}});
  EXPECT_EQ(command.worker_argv, (std::vector<std::string>{"/opt/py/bin/python", "-u", "t.py"}));
  EXPECT_TRUE(HasNote(command, Level::kPlan, "python: $PYTHON_EXEC = /opt/py/bin/python"));
}

TEST(TorchrunCommandTest, EverythingAfterTheScriptIsTheScripts) {
  TorchrunCommand command = Read({"--nproc-per-node", "2", "t.py", "--nnodes", "4", "--dry-run", "-m", "--", "x"});
  EXPECT_EQ(command.worker_argv,
            (std::vector<std::string>{"python3", "-u", "t.py", "--nnodes", "4", "--dry-run", "-m", "--", "x"}));
  EXPECT_EQ(Value(command, "direct.nproc_per_node"), "2");
  EXPECT_EQ(Value(command, "direct.nnodes"), "<unset>");
  EXPECT_TRUE(command.our_options.empty());
  // "--" ends torchrun's options: a script whose name starts with a dash.
  EXPECT_EQ(Read({"--", "-odd.py"}).worker_argv, (std::vector<std::string>{"python3", "-u", "-odd.py"}));
}

TEST(TorchrunCommandTest, ModuleNoPythonAndRunPath) {
  EXPECT_EQ(Read({"-m", "pkg.train", "a"}).worker_argv, (std::vector<std::string>{"python3", "-u", "-m", "pkg.train", "a"}));
  EXPECT_EQ(Read({"--module", "pkg.train"}).worker_argv, (std::vector<std::string>{"python3", "-u", "-m", "pkg.train"}));
  for (const char* flag : {"--no-python", "--no_python"}) {
    EXPECT_EQ(Read({flag, "/bin/echo", "hi"}).worker_argv, (std::vector<std::string>{"/bin/echo", "hi"}));
  }
  for (const char* flag : {"--run-path", "--run_path"}) {
    std::vector<std::string> argv = Read({flag, "--no-python", "/abs/t.py", "x"}).worker_argv;
    ASSERT_EQ(argv.size(), 6u);
    EXPECT_EQ(argv[0], "python3");
    EXPECT_EQ(argv[2], "-c");
    EXPECT_NE(argv[3].find("runpy.run_path(sys.argv[0], run_name='__main__')"), std::string::npos);
    EXPECT_EQ(argv[4], "/abs/t.py");
    EXPECT_EQ(argv[5], "x");
  }
  Error both = ReadError({"--no-python", "-m", "pkg"});
  EXPECT_EQ(both.code, ExitCode::kUsage);
  EXPECT_NE(both.message.find("--no-python and -m/--module"), std::string::npos);
}

TEST(TorchrunCommandTest, FlagsTakeValuesInEveryForm) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--nproc-per-node", "4", "t.py"}, {"--nproc_per_node", "4", "t.py"},
        {"--nproc-per-node=4", "t.py"}, {"--nproc_per_node=4", "t.py"}, {"--nproc", "4", "t.py"},
        {"--nproc_per=4", "t.py"}}) {
    TorchrunCommand command = Read(args);
    EXPECT_EQ(Value(command, "direct.nproc_per_node"), "4") << Join(args, " ");
    EXPECT_EQ(DefaultValue(command, "direct.nproc_per_node"), "<unset>");
  }
  EXPECT_EQ(Find(Read({"--nproc_per_node=4", "t.py"}).settings, "direct.nproc_per_node")->source, "--nproc_per_node");
  EXPECT_EQ(Value(Read({"-r3", "t.py"}), "direct.redirects"), "3");
  EXPECT_EQ(Value(Read({"-r", "0:1,1:2", "t.py"}), "direct.redirects"), "0:1,1:2");
  EXPECT_EQ(Value(Read({"-t0:3", "t.py"}), "direct.tee"), "0:3");
  EXPECT_EQ(Value(Read({"--tee=2", "t.py"}), "direct.tee"), "2");
  EXPECT_EQ(Value(Read({"--nnodes", "2", "--nnodes", "3", "t.py"}), "direct.nnodes"), "3");  // the last wins
}

TEST(TorchrunCommandTest, NprocPerNodeForms) {
  for (const char* value : {"auto", "gpu", "cpu", "8"}) {
    EXPECT_EQ(Value(Read({"--nproc-per-node", value, "t.py"}), "direct.nproc_per_node"), value);
  }
  EXPECT_TRUE(HasNote(Read({"--nproc-per-node", "auto", "t.py"}), Level::kPlan, "one per CPU"));
  for (const char* value : {"xpu", "0", "many", "-1", "5000"}) {
    Error error = ReadError({"--nproc-per-node", value, "t.py"});
    EXPECT_EQ(error.code, ExitCode::kUsage) << value;
    EXPECT_EQ(error.message.rfind("--nproc-per-node ", 0), 0u) << error.message;
  }
}

TEST(TorchrunCommandTest, StaticMultiNodeMapsOntoOurs) {
  TorchrunCommand command = Read({"--nnodes=2", "--node_rank=1", "--master_addr=10.0.0.1", "--master_port=29600",
                                  "--nproc_per_node=8", "t.py"});
  EXPECT_EQ(Value(command, "direct.nnodes"), "2");
  EXPECT_EQ(Value(command, "direct.node_rank"), "1");
  EXPECT_EQ(Value(command, "direct.master_addr"), "10.0.0.1");
  EXPECT_EQ(Value(command, "direct.master_port"), "29600");
  // torchrun's defaults for the rest: 127.0.0.1:29500 on every node.
  TorchrunCommand defaults = Read({"--nnodes", "2:2", "--node-rank", "0", "t.py"});
  EXPECT_EQ(Value(defaults, "direct.nnodes"), "2");
  EXPECT_EQ(DefaultValue(defaults, "direct.master_addr"), "127.0.0.1");
  EXPECT_EQ(DefaultValue(defaults, "direct.master_port"), "29500");
  // The static rendezvous takes --rdzv-endpoint over --master-addr/--master-port.
  TorchrunCommand endpoint = Read({"--nnodes", "2", "--rdzv-endpoint", "host0:1234", "--master-addr", "x", "t.py"});
  EXPECT_EQ(Value(endpoint, "direct.master_addr"), "host0");
  EXPECT_EQ(Value(endpoint, "direct.master_port"), "1234");
  EXPECT_EQ(ReadError({"--rdzv-endpoint", "host0", "t.py"}).message.find("the port is missing") != std::string::npos,
            true);
}

// c10d on several nodes: the endpoint is the coordinator's control channel,
// node ranks are handed out (a --node-rank is not used, as in torchrun), and
// the coordinator picks the workers' master port.
TEST(TorchrunCommandTest, C10dHandsNodeRanksOut) {
  TorchrunCommand command = Read({"--nnodes", "2", "--node-rank", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
                                  "node0", "--rdzv-id", "job42", "t.py"});
  EXPECT_EQ(Value(command, "direct.rendezvous"), "c10d");
  EXPECT_EQ(Value(command, "direct.master_addr"), "node0");
  EXPECT_EQ(Value(command, "direct.control_port"), "29400");  // c10d's default port
  EXPECT_EQ(Value(command, "direct.master_port"), "0");       // the coordinator's pick
  EXPECT_EQ(Value(command, "direct.node_rank"), "0");
  EXPECT_EQ(Value(command, "direct.run_id"), "job42");
  EXPECT_TRUE(HasNote(command, Level::kPlan, "node ranks are handed out as nodes join"));
  EXPECT_TRUE(HasNote(command, Level::kDebug, "--node-rank 1: not used with c10d"));
  // Elastic: MIN:MAX.
  TorchrunCommand elastic =
      Read({"--nnodes=1:4", "--rdzv-backend=c10d", "--rdzv-endpoint=node0:29400", "--rdzv-conf",
            "last_call_timeout=2,close_timeout=7", "t.py"});
  EXPECT_EQ(Value(elastic, "direct.nnodes"), "4");
  EXPECT_EQ(Value(elastic, "direct.min_nnodes"), "1");
  EXPECT_EQ(Value(elastic, "direct.last_call_timeout"), "2");
  EXPECT_EQ(Value(elastic, "direct.exit_barrier_timeout"), "7");
  EXPECT_TRUE(HasNote(elastic, Level::kPlan, "the job runs on 1 to 4 nodes"));
  // etcd-v2: the server's address and the run id the nodes meet under.
  TorchrunCommand etcd = Read({"--nnodes=2:3", "--rdzv-backend=etcd-v2", "--rdzv-endpoint=etcd0:2379",
                               "--rdzv-id=j7", "--local-addr=10.0.0.5", "t.py"});
  EXPECT_EQ(Value(etcd, "direct.rendezvous"), "etcd-v2");
  EXPECT_EQ(Value(etcd, "direct.rdzv_endpoint"), "etcd0:2379");
  EXPECT_EQ(Value(etcd, "direct.local_addr"), "10.0.0.5");
  EXPECT_EQ(Value(etcd, "direct.min_nnodes"), "2");
  EXPECT_EQ(Value(Read({"--rdzv_backend=c10d", "--rdzv_endpoint=[::1]:29401", "t.py"}), "direct.master_addr"), "::1");
  // One node: port 0 is a free port.
  TorchrunCommand local = Read({"--rdzv-backend=c10d", "--rdzv-endpoint=localhost:0", "t.py"});
  EXPECT_EQ(Value(local, "direct.master_addr"), "localhost");
  EXPECT_EQ(Value(local, "direct.master_port"), "0");  // a free port, whatever PET_MASTER_PORT says
  EXPECT_TRUE(HasNote(Read({"--rdzv-backend=c10d", "--rdzv-endpoint=h:1", "--master-port", "5", "t.py"}), Level::kWarn,
                      "--master-port is ignored with --rdzv-backend c10d"));
}

TEST(TorchrunCommandTest, StandaloneIsOneNodeWithAFreePort) {
  TorchrunCommand command =
      Read({"--standalone", "--nproc-per-node", "2", "--rdzv-id", "x", "t.py"}, {{"PET_MASTER_PORT", "1234"}});
  EXPECT_EQ(Value(command, "direct.master_port"), "0");  // a free port
  EXPECT_EQ(Value(command, "direct.master_addr"), "127.0.0.1");
  EXPECT_EQ(Value(command, "direct.run_id"), "<unset>");
  EXPECT_TRUE(HasNote(command, Level::kWarn, "--standalone: --rdzv-id, PET_MASTER_PORT ignored"));
  EXPECT_EQ(ReadError({"--standalone", "--nnodes", "2", "t.py"}).code, ExitCode::kUsage);
}

TEST(TorchrunCommandTest, WhatCannotWorkYetIsRefusedNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--nnodes", "1:4", "t.py"}, "--nnodes 1:4 is an elastic job, but the static rendezvous"},
           {{"--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "h:0", "t.py"}, "port 0 is chosen at random"},
           {{"--rdzv-backend", "etcd", "t.py"}, "--rdzv-backend etcd needs --rdzv-endpoint"},
           {{"--nnodes", "2", "--rdzv_backend", "etcd-v2", "--rdzv-endpoint", "e:2379", "t.py"},
            "--rdzv_backend etcd-v2 needs --rdzv-id"},
           {{"--rdzv-backend", "zk", "t.py"}, "unknown rendezvous backend"},
           {{"--rdzv-backend", "c10d", "t.py"}, "c10d needs --rdzv-endpoint"},
           {{"--logs-specs", "mine", "t.py"}, "--logs-specs mine names a Python plugin"},
           {{"--logs_specs=mine", "t.py"}, "--logs_specs mine names a Python plugin"},
           {{"--numa-binding", "socket", "t.py"}, "--numa-binding socket: not supported yet"},
           {{"--max-restarts=-1", "t.py"}, "--max-restarts -1: the number of restarts must be 0 or more"},
           {{"--max_restarts", "x", "t.py"}, "expected an integer"},
           {{"--node-rank", "2", "--nnodes", "2", "t.py"}, "the node rank must be from 0 to 1"},
           {{"--rdzv-id", "a/b", "t.py"}, "--rdzv-id 'a/b'"},
           {{"--local-ranks-filter", "x", "t.py"}, "--local-ranks-filter 'x'"},
           {{"--redirects", "4", "t.py"}, "--redirects '4'"},
           {{"--start-method", "thread", "t.py"}, "choose from spawn, fork, forkserver"},
           {{"--monitor-interval", "soon", "t.py"}, "--monitor-interval 'soon'"},
           {{"--signals-to-handle", "SIGNOPE", "t.py"}, "'SIGNOPE' is not a signal name"},
           {{"--nprocs-per-node", "2", "t.py"}, "unrecognized torchrun option --nprocs-per-node"},
           {{"--log", "x", "t.py"}, "ambiguous torchrun option --log"},
           {{"--nproc-per-node"}, "--nproc-per-node expects a value"},
           {{"--nproc-per-node", "2"}, "needs a training script"},
           {{}, "needs a training script"},
           {{"--standalone=1", "t.py"}, "--standalone takes no value"},
       }) {
    Error error = ReadError(c.args);
    EXPECT_EQ(error.code, ExitCode::kUsage) << Join(c.args, " ");
    EXPECT_NE(error.message.find(c.message), std::string::npos) << Join(c.args, " ") << "\n" << error.message;
    EXPECT_FALSE(error.hint.empty()) << Join(c.args, " ");
  }
  EXPECT_NE(ReadError({"--nprocs-per-node", "2", "t.py"}).message.find("did you mean"), std::string::npos);
}

TEST(TorchrunCommandTest, PetVariablesStandInForFlagsNotGiven) {
  Environment env({{"PET_NNODES", "2"},
                           {"PET_NODE_RANK", "1"},
                           {"PET_MASTER_ADDR", "10.0.0.1"},
                           {"PET_MASTER_PORT", "29700"},
                           {"PET_NPROC_PER_NODE", "4"},
                           {"PET_MAX_RESTARTS", "3"},
                           {"PET_LOG_DIR", "/logs"},
                           {"PET_TEE", "3"},
                           {"PET_REDIRECTS", "3"},
                           {"PET_LOCAL_RANKS_FILTER", "0"},
                           {"PET_ROLE", "trainer"},
                           {"PET_MODULE", "1"},
                           {"PET_RDZV_ID", "job9"},
                           {"PET_RDZV_CONF", "join_timeout=90"},
                           {"PET_STANDALONE", "0"}});
  TorchrunCommand command = Read({"--nproc-per-node", "2", "pkg.main"}, env);
  EXPECT_EQ(Value(command, "direct.nproc_per_node"), "2");  // the flag wins
  EXPECT_FALSE(Find(command.settings, "direct.nproc_per_node")->from_environment);
  auto nnodes = Find(command.settings, "direct.nnodes");
  ASSERT_TRUE(nnodes);
  EXPECT_EQ(nnodes->value, "2");
  EXPECT_EQ(nnodes->source, "PET_NNODES");
  EXPECT_TRUE(nnodes->from_environment);
  EXPECT_EQ(Value(command, "direct.node_rank"), "1");
  EXPECT_EQ(Value(command, "direct.master_addr"), "10.0.0.1");
  EXPECT_EQ(Value(command, "direct.master_port"), "29700");
  EXPECT_EQ(Value(command, "direct.max_restarts"), "3");
  EXPECT_EQ(Value(command, "direct.log_dir"), "/logs/job9_20261125-101010-abcdef");
  EXPECT_EQ(Value(command, "direct.tee"), "3");
  EXPECT_EQ(Value(command, "direct.redirects"), "3");
  EXPECT_EQ(Value(command, "direct.local_ranks_filter"), "0");
  EXPECT_EQ(Value(command, "direct.role"), "trainer");
  EXPECT_EQ(Value(command, "direct.run_id"), "job9");
  EXPECT_EQ(Value(command, "direct.join_timeout"), "90");
  EXPECT_EQ(command.worker_argv, (std::vector<std::string>{"python3", "-u", "-m", "pkg.main"}));  // PET_MODULE=1
  // An empty variable is unset; a flag variable must be a number.
  EXPECT_EQ(Value(Read({"t.py"}, {{"PET_NNODES", ""}}), "direct.nnodes"), "<unset>");
  Error bad = ReadError({"t.py"}, {{"PET_NO_PYTHON", "yes"}});
  EXPECT_NE(bad.message.find("PET_NO_PYTHON=yes"), std::string::npos);
  Error elastic = ReadError({"t.py"}, {{"PET_NNODES", "1:4"}});
  EXPECT_EQ(elastic.message.rfind("PET_NNODES 1:4 is an elastic job", 0), 0u) << elastic.message;
  Error restarts = ReadError({"t.py"}, {{"PET_MAX_RESTARTS", "-1"}});
  EXPECT_EQ(restarts.code, ExitCode::kUsage);
}

TEST(TorchrunCommandTest, LogDirGetsOneDirectoryPerRun) {
  TorchrunCommand command = Read({"--log-dir", "/var/log/t", "t.py"});
  EXPECT_EQ(Value(command, "direct.log_dir"), "/var/log/t/20261125-101010-abcdef");
  EXPECT_EQ(Value(command, "direct.run_id"), "20261125-101010-abcdef");
  EXPECT_EQ(Value(Read({"--log_dir=/l", "--rdzv-id", "j1", "t.py"}), "direct.log_dir"), "/l/j1_20261125-101010-abcdef");
  // torchrun's own layout is written beside ours; without --log-dir, only ours.
  EXPECT_EQ(Value(command, "direct.torchrun_log_files"), "true");
  EXPECT_EQ(Value(Read({"t.py"}), "direct.torchrun_log_files"), "<unset>");
}

TEST(TorchrunCommandTest, NewerTorchrunFlags) {
  EXPECT_EQ(Value(Read({"--virtual-local-rank", "t.py"}), "direct.virtual_local_rank"), "true");
  EXPECT_EQ(Value(Read({"t.py"}, {{"PET_VIRTUAL_LOCAL_RANK", "1"}}), "direct.virtual_local_rank"), "true");
  EXPECT_EQ(Value(Read({"t.py"}, {{"PET_VIRTUAL_LOCAL_RANK", "0"}}), "direct.virtual_local_rank"), "<unset>");
  EXPECT_EQ(Value(Read({"--shutdown_timeout", "12", "t.py"}), "direct.term_timeout"), "12");
  EXPECT_EQ(ReadError({"--shutdown-timeout", "-3", "t.py"}).code, ExitCode::kUsage);
  Error filters = ReadError({"--duplicate-stdout-filters", "loss,step", "t.py"});
  EXPECT_EQ(filters.code, ExitCode::kUsage);
  EXPECT_NE(filters.message.find("--duplicate-stdout-filters 'loss,step': not supported yet"), std::string::npos)
      << filters.message;
  // An empty list is torchrun's default: nothing to duplicate.
  EXPECT_EQ(Value(Read({"--duplicate-stderr-filters=", "t.py"}), "direct.log_dir"), "<unset>");
}

TEST(TorchrunCommandTest, RendezvousConfUsesWhatWeHave) {
  TorchrunCommand command = Read(
      {"--rdzv-conf", "join_timeout=900,keep_alive_interval=2,read_timeout=60,last_call_timeout=5,bogus=1", "t.py"});
  EXPECT_EQ(Value(command, "direct.join_timeout"), "900");
  EXPECT_EQ(Value(command, "direct.heartbeat_interval"), "2");
  EXPECT_EQ(Value(command, "direct.heartbeat_timeout"), "6");  // 3 missed beats, torchrun's default
  EXPECT_EQ(Value(command, "direct.last_call_timeout"), "5");
  EXPECT_TRUE(HasNote(command, Level::kWarn, "read_timeout=60: ignored"));
  // Without keep-alive settings read_timeout bounds a silent node.
  EXPECT_EQ(Value(Read({"--rdzv-conf", "read_timeout=12", "t.py"}), "direct.heartbeat_timeout"), "12");
  EXPECT_TRUE(HasNote(command, Level::kWarn, "bogus=1: not a setting"));
  EXPECT_EQ(ReadError({"--rdzv_conf=join_timeout", "t.py"}).code, ExitCode::kUsage);
  EXPECT_EQ(ReadError({"--rdzv_conf=join_timeout=-3", "t.py"}).code, ExitCode::kUsage);
}

TEST(TorchrunCommandTest, InternalsAreAcceptedAndSaidToBeNotNeeded) {
  TorchrunCommand command = Read({"--monitor-interval", "0.1", "--start_method=fork", "--local-addr", "10.0.0.5",
                                  "--signals-to-handle", "SIGTERM,SIGINT,SIGHUP,SIGQUIT", "--event-log-handler",
                                  "null", "t.py"});
  EXPECT_TRUE(HasNote(command, Level::kDebug, "--monitor-interval 0.1: not needed"));
  EXPECT_TRUE(HasNote(command, Level::kDebug, "--start_method fork: not needed"));
  EXPECT_TRUE(HasNote(command, Level::kDebug, "--local-addr 10.0.0.5: not needed"));
  EXPECT_TRUE(HasNote(command, Level::kDebug, "--signals-to-handle: not needed"));
  for (const TorchrunNote& note : command.notes) EXPECT_NE(note.level, Level::kWarn) << note.text;
  EXPECT_TRUE(HasNote(Read({"--signals_to_handle=SIGTERM,SIGALRM", "t.py"}), Level::kWarn, "does not forward SIGALRM"));
  EXPECT_TRUE(HasNote(Read({"--event-log-handler", "console", "t.py"}), Level::kWarn, "ignored"));
}

TEST(TorchrunCommandTest, RoleRestartsFilterAndNumaBinding) {
  TorchrunCommand command = Read({"--role", "trainer", "--max-restarts", "3", "--local-ranks-filter", "0,1",
                                  "--numa-binding", "node", "t.py"});
  EXPECT_EQ(Value(command, "direct.role"), "trainer");
  EXPECT_EQ(Value(command, "direct.max_restarts"), "3");
  EXPECT_EQ(Value(command, "direct.local_ranks_filter"), "0,1");
  EXPECT_EQ(Value(command, "direct.numa_bind"), "true");
  EXPECT_EQ(Value(Read({"--local_ranks_filter=2", "t.py"}), "direct.local_ranks_filter"), "2");
}

TEST(TorchrunCommandTest, OurGlobalOptionsMayStandAmongTorchruns) {
  TorchrunCommand command =
      Read({"--dry-run", "--nproc-per-node", "2", "--set", "direct.term_timeout=5", "--debug", "--config=c.yaml", "t.py"});
  EXPECT_EQ(command.our_options,
            (std::vector<std::string>{"--dry-run", "--set", "direct.term_timeout=5", "--debug", "--config=c.yaml"}));
  EXPECT_TRUE(Read({"--nproc-per-node", "2", "-h"}).help);
  EXPECT_TRUE(Read({"--help", "t.py"}).help);
  EXPECT_TRUE(Read({"--version"}).version);
}

TEST(TorchrunCommandTest, HelpNamesEveryFlag) {
  std::string help = TorchrunHelp();
  for (const char* flag : {"--nnodes", "--nproc-per-node", "--node-rank", "--master-addr", "--master-port",
                           "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf", "--standalone",
                           "--max-restarts", "--role", "--module", "--no-python", "--run-path", "--log-dir",
                           "--redirects", "--tee", "--local-ranks-filter", "--numa-binding", "--monitor-interval",
                           "--start-method", "--signals-to-handle", "--local-addr", "--event-log-handler",
                           "--logs-specs", "--virtual-local-rank", "--shutdown-timeout",
                           "--duplicate-std", "PYTHON_EXEC", "PRIMUS_DIRECT_FAILURE_EXIT_CODE"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace primus::cli
