// `slurm`: start one node agent per node through srun, or write and submit
// a batch script whose body runs srun (so every node starts). srun/sbatch
// flags this table does not know pass through unchanged, in order.
//
//   slurm srun   -> srun --ntasks-per-node=1 --kill-on-bad-exit=1 ... primus-cli direct ... (slurm_command_line.h),
//                   in the foreground, returning the root cause's exit code (slurm_step_runner.h)
//   slurm sbatch -> a batch script (batch_script.h) submitted held with sbatch --parsable --hold,
//                   written to <workspace>/<name>_<job id>/sbatch.sh (slurm_job_dir.h), released;
//                   --wait follows it (slurm_job_watch.h)
// Both put PRIMUS_JOB_TOKEN (slurm_job_token.h) into srun's/sbatch's environment.
#include <iostream>

#include "util/clock.h"
#include "util/environment.h"
#include "config/launcher_config.h"
#include "platform/launcher_plan_request.h"
#include "job/control_protocol.h"
#include "runtime/bad_node_relaunch.h"
#include "runtime/batch_script.h"
#include "runtime/node_dry_run.h"
#include "runtime/container_mounts.h"
#include "runtime/runtime.h"
#include "runtime/slurm_command_line.h"
#include "runtime/slurm_job_dir.h"
#include "runtime/slurm_job_token.h"
#include "runtime/slurm_job_watch.h"
#include "runtime/slurm_step_runner.h"
#include "runtime/slurm_submit.h"
#include "snapshot/metadata.h"
#include "snapshot/redaction.h"
#include "util/files.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/private_files.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::runtime {
namespace {

// Where sbatch runs the job from: its --chdir, else here.
std::string SubmitDir(const std::vector<std::string>& flags) {
  std::optional<std::string> chdir = FlagValue(flags, "--chdir", "-D");
  return chdir ? AbsolutePath(*chdir, CurrentDir()) : CurrentDir();
}

// The deepest directory of `path` (absolute) that exists.
std::string NearestExisting(const std::string& path) {
  std::string dir = DirName(path);
  while (dir.size() > 1 && !IsDirectory(dir)) dir = DirName(dir);
  return dir;
}

// The directories of the user's --output/--error files that do not exist
// (absolute); a directory with a per-node pattern (%N, %t) is Slurm's to name.
std::vector<std::string> MissingLogDirs(const std::vector<std::string>& flags) {
  std::vector<std::string> missing;
  for (const auto& [long_name, short_name] : {std::pair{"--output", "-o"}, std::pair{"--error", "-e"}}) {
    std::optional<std::string> value = FlagValue(flags, long_name, short_name);
    if (!value || value->find('/') == std::string::npos) continue;
    std::string dir = DirName(AbsolutePath(*value, SubmitDir(flags)));
    if (dir.find('%') != std::string::npos || IsDirectory(dir)) continue;
    if (std::find(missing.begin(), missing.end(), dir) == missing.end()) missing.push_back(dir);
  }
  return missing;
}

using K = OptionSpec::Kind;

Error MissingCommand(const std::string& name) {
  return UnavailableError(name + " not found on PATH: this host is not a Slurm client",
                          "run on a Slurm login node (or install the Slurm client: apt install slurm-client); "
                          "without Slurm, run primus-cli direct --nnodes N --node-rank R --master-addr A on each node");
}

// A flag of the other action given on this command line is a mistake;
// from a configuration file it is a default for the other action.
Status CheckActionFlags(const config::LauncherConfig& launcher, const std::string& action) {
  if (action != "srun") return Status::Ok();
  for (auto [key, flag, why] : {std::tuple{"slurm.wait", "--wait", "srun always waits for its job"},
                                std::tuple{"slurm.requeue", "--requeue", "only a batch job can be requeued"}}) {
    if (launcher.GetBool(key) && launcher.OriginOf(key).source.starts_with("flag")) {
      return UsageError(std::string(flag) + " is for 'slurm sbatch': " + why,
                        std::string("write: primus-cli slurm sbatch ") + flag + " ... -- <task> ...");
    }
  }
  return Status::Ok();
}

// The node count the job will have: srun/sbatch's -N/--nodes as written, else
// the slurm.nodes flag, else the allocation's (inside one), else 1. A range
// (MIN-MAX) counts its minimum: the fewest nodes the job may start on.
int NodesOf(const std::vector<std::string>& user_flags, const std::vector<std::string>& config_flags,
            const std::map<std::string, std::string>& environment) {
  std::optional<std::string> nodes = FlagValue(user_flags, "--nodes", "-N");
  if (!nodes) nodes = FlagValue(config_flags, "--nodes", "-N");
  if (!nodes) {
    auto found = environment.find("SLURM_JOB_NUM_NODES");
    if (found != environment.end()) nodes = found->second;
  }
  if (!nodes) return 1;
  std::optional<int64_t> count = ParseInt(Trim(Split(*nodes, '-').front()));
  return count && *count >= 1 && *count <= 100000 ? static_cast<int>(*count) : 1;
}

// The pass-through flags without srun's --exclude/-x, whose hosts go to
// `excluded` (direct.exclude_bad_nodes adds its own to them: one flag).
std::vector<std::string> WithoutExcludeFlag(const std::vector<std::string>& flags, std::vector<std::string>* excluded) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    std::string value;
    if (flag.starts_with("--exclude=")) {
      value = flag.substr(10);
    } else if ((flag == "--exclude" || flag == "-x") && i + 1 < flags.size()) {
      value = flags[++i];
    } else if (flag.starts_with("-x") && flag.size() > 2) {
      value = flag.substr(2);
    } else {
      kept.push_back(flag);
      continue;
    }
    for (const std::string& host : Split(value, ',')) {
      if (!host.empty()) excluded->push_back(host);
    }
  }
  return kept;
}

class SlurmRuntime : public Runtime {
 public:
  std::string name() const override { return "slurm"; }
  std::string summary() const override { return "run on a Slurm cluster (srun now, or sbatch a job)"; }
  std::string usage() const override {
    return "primus-cli [global options] slurm [srun|sbatch] [slurm flags] -- [container ... --|direct ... --] <task> [args]";
  }
  std::vector<std::string> examples() const override {
    return {
        "primus-cli slurm srun -N 8 -- benchmark gemm -M 4096",
        "primus-cli slurm sbatch -N 64 -p prod -- container --image IMG -- train pretrain --config exp.yaml",
        "primus-cli slurm sbatch -N 2 --wait -- train pretrain --config exp.yaml",
    };
  }
  std::string details() const override {
    return "srun (the default) runs one node agent per node now:\n"
           "  srun --ntasks-per-node=1 --kill-on-bad-exit=1 [flags] primus-cli direct [...] -- <task> ...\n"
           "and returns the first failing node's exit code. sbatch submits a batch script whose body does the\n"
           "same on every node of the allocation, keeps it as <workspace>/<name>_<job id>/sbatch.sh (the job's\n"
           "experiment directory, also used by train) and prints the job id and log path;\n"
           "--wait follows the job and returns its exit code (Ctrl-C cancels it). Other srun/sbatch flags pass\n"
           "through unchanged; defaults come from the slurm.* configuration keys. PRIMUS_JOB_TOKEN is created\n"
           "for the job unless set. Inside a step, direct derives nnodes, node rank and master address from\n"
           "SLURM_* variables; the master port is 20000 + 2 * (SLURM_JOB_ID % 5000). See docs/slurm.md.\n";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--nodes", "-N"}, K::kValue, "N|MIN-MAX", "slurm.nodes", "number of nodes, or a range Slurm chooses from"},
        {{"--partition", "-p"}, K::kValue, "NAME", "slurm.partition", "partition"},
        {{"--account", "-A"}, K::kValue, "NAME", "slurm.account", "account to charge"},
        {{"--time", "-t"}, K::kValue, "TIME", "slurm.time", "time limit"},
        {{"--qos"}, K::kValue, "QOS", "slurm.qos", "quality of service"},
        {{"--reservation"}, K::kValue, "NAME", "slurm.reservation", "reservation"},
        {{"--gpus-per-node"}, K::kValue, "N", "slurm.gpus_per_node", "GPUs per node"},
        {{"--wait"}, K::kFlag, "", "slurm.wait", "sbatch: follow the job and return its exit code"},
        {{"--requeue"}, K::kFlag, "", "slurm.requeue", "sbatch: requeue on node failure or preemption"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"container", "direct"}; }
  std::vector<std::string> actions() const override { return {"srun", "sbatch"}; }
  std::string default_action() const override { return "srun"; }
  UnknownOptionPolicy unknown_options() const override { return UnknownOptionPolicy::kPassThrough; }

  Result<int> Execute(const RuntimeContext& context) override {
    const Invocation& invocation = *context.invocation;
    const ModeInvocation& mode = invocation.chain[context.depth];
    const config::LauncherConfig& launcher = *context.launcher;
    if (Status status = CheckActionFlags(launcher, mode.action); !status.ok()) return status.error();

    Result<std::string> binary = SelfExecutable();
    if (!binary.ok()) return binary.error();
    std::vector<std::string> globals = GlobalArguments(context, options());
    return mode.action == "sbatch" ? Sbatch(context, *binary, globals) : Srun(context, *binary, globals);
  }

 private:
  Result<int> Srun(const RuntimeContext& context, const std::string& binary, const std::vector<std::string>& globals) {
    const Invocation& invocation = *context.invocation;
    const ModeInvocation& mode = invocation.chain[context.depth];
    if (auto checked = DirectivesFromFlags(mode.passthrough, "srun"); !checked.ok()) return checked.error();
    std::map<std::string, std::string> environment = ProcessEnvironment();
    // Inside an allocation (a batch script, salloc) srun makes a step of it:
    // only what this command line asks for applies, not the files' defaults
    // for new allocations.
    bool inside_allocation = environment.count("SLURM_JOB_ID") > 0;
    std::vector<std::string> node_command = {binary};
    node_command.insert(node_command.end(), globals.begin(), globals.end());
    std::vector<std::string> inner = InnerCommand(invocation, context.depth);
    node_command.insert(node_command.end(), inner.begin(), inner.end());
    Result<std::vector<std::string>> flags = SlurmFlagsFromConfig(*context.launcher, inside_allocation);
    if (!flags.ok()) return flags.error();
    std::vector<std::string> argv = SrunCommand(*flags, mode.passthrough, node_command);

    if (context.dry_run) {
      std::cout << "srun command (one node agent per node):\n  " << ShellJoin(argv) << "\n"
                << "srun's environment adds: " << kJobTokenVariable
                << (environment.count(kJobTokenVariable) ? " (already set, kept)" : " (a new random token)") << "\n"
                << std::flush;
      if (FindExecutable("srun").empty()) log::Warn("{}", MissingCommand("srun").message);
      Status checked = CheckNodeCommand({node_command, NodesOf(mode.passthrough, *flags, environment), "each Slurm node",
                                         GpusPerNodeOf(argv)});
      if (!checked.ok()) return checked.error();
      return 0;
    }
    if (FindExecutable("srun").empty()) return MissingCommand("srun");
    Result<std::map<std::string, std::string>> token = JobTokenEnvironment(environment);
    if (!token.ok()) return token.error();
    if (!context.launcher->GetBool("direct.exclude_bad_nodes")) {
      log::Debug("running: {}", ShellJoin(argv));
      return RunSrunStep(argv, *token);
    }
    // direct.exclude_bad_nodes: again without a node found bad, on the
    // allocation's spare nodes (outside one, srun finds new nodes).
    RelaunchPlan relaunch;
    relaunch.nodes = NodesOf(mode.passthrough, *flags, environment);
    if (inside_allocation && environment.count("SLURM_JOB_NODELIST")) {
      auto pool = ExpandHostlist(environment["SLURM_JOB_NODELIST"]);
      if (!pool.ok()) return pool.error();
      relaunch.pool = *pool;
    }
    relaunch.max_relaunches = static_cast<int>(context.launcher->GetInt("direct.max_restarts"));
    relaunch.restarts_before = context.launcher->scheduler().restart_count;
    if (!relaunch.pool.empty()) {
      // A batch job with no spare left goes on as a new job (slurm_submit.h).
      Result<BatchContinuation> continuation = UsageError("no job directory");
      Result<JobDirPlan> plan = PlanJobDir(invocation, environment, CurrentDir());
      if (plan.ok()) continuation = FindBatchContinuation(*plan, environment);
      if (!continuation.ok()) {
        log::Debug("no spare node means no restart: {}", continuation.error().message);
      } else {
        relaunch.continue_elsewhere = [continuation = *continuation, &environment](
                                          const std::vector<std::string>& excluded, int restart) -> Result<int> {
          auto next = SubmitContinuation(continuation, excluded, restart, environment);
          if (!next.ok()) return next.error();
          log::Warn("job {} goes on as job {}, which leaves out {} (its script: {}/sbatch-{}.sh); this job ends "
                    "with exit code {}", continuation.job_id, *next, Join(excluded, ", "), continuation.job_dir, *next,
                    static_cast<int>(ExitCode::kNodeExcluded));
          return static_cast<int>(ExitCode::kNodeExcluded);
        };
      }
    }
    std::vector<std::string> user_excluded;
    std::vector<std::string> passthrough = WithoutExcludeFlag(mode.passthrough, &user_excluded);
    return RunExcludingBadNodes(relaunch, [&](const std::vector<std::string>& excluded, int spare,
                                              int attempt) -> Result<StepEnd> {
      std::vector<std::string> step_flags = *flags;
      std::vector<std::string> all_excluded = user_excluded;
      all_excluded.insert(all_excluded.end(), excluded.begin(), excluded.end());
      if (!all_excluded.empty()) step_flags.push_back("--exclude=" + Join(all_excluded, ","));
      std::vector<std::string> step_command = node_command;
      std::vector<std::string> spare_option = SpareNodesOption(spare);
      step_command.insert(step_command.begin() + 1, spare_option.begin(), spare_option.end());
      std::vector<std::string> step = SrunCommand(step_flags, passthrough, step_command);
      std::map<std::string, std::string> step_env = *token;
      if (attempt > 0) step_env["PRIMUS_SCHEDULER_RESTARTS"] = std::to_string(relaunch.restarts_before + attempt);
      log::Debug("running: {}", ShellJoin(step));
      std::vector<SrunTaskEnd> ends;
      auto code = RunSrunStep(step, step_env, &ends);
      if (!code.ok()) return code.error();
      StepEnd end;
      end.exit_code = *code;
      for (const SrunTaskEnd& task : ends) {
        if (task.exit_code == static_cast<int>(ExitCode::kNodeExcluded) && job::IsHostAddress(task.node)) {
          end.excluded_hosts.push_back(task.node);
        }
      }
      return end;
    });
  }

  Result<int> Sbatch(const RuntimeContext& context, const std::string& binary, const std::vector<std::string>& globals) {
    const Invocation& invocation = *context.invocation;
    const ModeInvocation& mode = invocation.chain[context.depth];
    const config::LauncherConfig& launcher = *context.launcher;
    bool wait = launcher.GetBool("slurm.wait");

    Result<std::vector<std::string>> passed = DirectivesFromFlags(mode.passthrough);
    if (!passed.ok()) return passed.error();
    Result<JobDirPlan> plan = PlanJobDir(invocation, ProcessEnvironment(), CurrentDir());
    if (!plan.ok()) return plan.error();
    Result<std::vector<std::string>> flags_from_config = SlurmFlagsFromConfig(launcher, /*explicit_only=*/false);
    if (!flags_from_config.ok()) return flags_from_config.error();
    std::vector<std::string> config_flags = std::move(*flags_from_config);
    std::vector<std::string> user_flags = mode.passthrough;
    user_flags.insert(user_flags.end(), config_flags.begin(), config_flags.end());
    for (const std::string& text : std::vector<std::string>{plan->name, plan->LogPattern()}) {
      if (Status status = CheckDirectiveText(text); !status.ok()) return status.error();
    }
    for (const std::string& flag : config_flags) {
      if (Status status = CheckDirectiveText(flag); !status.ok()) return status.error();
    }
    bool own_output = !HasFlag(user_flags, "--output", "-o");
    bool user_hold = HasFlag(user_flags, "--hold", "-H");

    BatchScript script;
    if (!HasFlag(user_flags, "--job-name", "-J")) script.directives.push_back("--job-name=" + ShellQuote(plan->name));
    for (const std::string& flag : config_flags) script.directives.push_back(ShellQuote(flag));
    if (launcher.GetBool("slurm.requeue")) {
      script.directives.push_back("--requeue");
      script.directives.push_back("--open-mode=append");  // a requeued run adds to the log
    }
    if (own_output) script.directives.push_back("--output=" + ShellQuote(plan->LogPattern()));
    script.directives.insert(script.directives.end(), passed->begin(), passed->end());
    std::vector<std::string> inner = InnerCommand(invocation, context.depth);
    std::vector<std::string> node_command = {binary};
    node_command.insert(node_command.end(), globals.begin(), globals.end());
    node_command.insert(node_command.end(), inner.begin(), inner.end());
    script.command = {binary};
    script.command.insert(script.command.end(), globals.begin(), globals.end());
    script.command.insert(script.command.end(), {"slurm", "srun", "--"});
    script.command.insert(script.command.end(), inner.begin(), inner.end());
    script.comment_lines = {
        "Written by primus-cli " + std::string(PRIMUS_VERSION) + " at " +
            snapshot::IsoTimeUtc(WallSeconds()) + " for:",
        "  " + ShellJoin(context.command_line),
        "",
        "The body starts one node agent on every node of the allocation, as",
        "  " + ShellJoin(SrunCommand({}, {}, node_command)),
        "through `primus-cli slurm srun`, so that the job ends with the first failing",
        "node's own exit code (srun alone reports the SIGTERM it sent the others).",
        "PRIMUS_JOB_TOKEN comes from sbatch's environment; it is never in this file.",
    };
    if (Status status = snapshot::CheckNoSecretArguments(
            script.command, "the batch script (Slurm keeps it, and shows it with scontrol write batch_script)",
            "export the variable before submitting instead: sbatch passes your environment to the job, and "
            "the agents pass it on to the workers");
        !status.ok()) {
      return status.error();
    }
    std::string text = RenderBatchScript(script);
    // The user's --output/--error directory: Slurm opens the file on the
    // node and, when its directory is missing, the job dies at once (exit
    // status 181) with nothing said. It is made here, ours, before the submit.
    std::vector<std::string> log_dirs = MissingLogDirs(user_flags);

    if (context.dry_run) {
      for (const std::string& dir : log_dirs) std::cout << "would create " << dir << " for Slurm's log file\n";
      std::cout << "batch script (" << JoinPath(plan->DirFor("<job id>"), "sbatch.sh")
                << " once sbatch --parsable --hold gives the job id; released when that directory exists):\n"
                << text << std::flush;
      if (FindExecutable("sbatch").empty()) log::Warn("{}", MissingCommand("sbatch").message);
      Status checked = CheckNodeCommand({node_command, NodesOf(mode.passthrough, config_flags, ProcessEnvironment()),
                                         "each node of the batch job", GpusPerNodeOf(user_flags)});
      if (!checked.ok()) return checked.error();
      return 0;
    }
    for (const char* tool : {"sbatch", "scontrol", "scancel", "squeue"}) {
      if ((wait || std::string(tool) != "squeue") && FindExecutable(tool).empty()) return MissingCommand(tool);
    }
    for (const std::string& dir : log_dirs) {
      std::string existing = NearestExisting(dir);
      std::string missing = existing == "/" ? dir.substr(1) : dir.substr(existing.size() + 1);
      if (Status made = MakePrivateDirs(existing, missing); !made.ok()) {
        return UnavailableError("the directory of Slurm's log file, " + dir + ", cannot be made: " + made.error().message,
                                "make it yourself, or give --output a path in a directory that exists");
      }
      log::Info("made {} for Slurm's log file", dir);
    }
    Result<std::map<std::string, std::string>> token = JobTokenEnvironment(ProcessEnvironment());
    if (!token.ok()) return token.error();
    std::map<std::string, std::optional<std::string>> submit_env(token->begin(), token->end());
    // Submitted from inside a job that continued another: a new job, not
    // that one's continuation (slurm_submit.h).
    Environment here = ProcessEnvironment();
    if (std::optional<std::string> first = Lookup(here, kFirstJobVariable)) {
      submit_env[kFirstJobVariable] = std::nullopt;
      submit_env["PRIMUS_SCHEDULER_RESTARTS"] = std::nullopt;
      if (Lookup(here, "PRIMUS_JOB_ID") == first) submit_env["PRIMUS_JOB_ID"] = std::nullopt;
    }
    Result<std::string> job_id = SubmitHeldBatchJob(text, submit_env);
    if (!job_id.ok()) return job_id.error();
    Result<std::string> script_path = WriteJobFiles(*plan, *job_id, text);
    if (script_path.ok() && !user_hold) {
      if (Status released = ReleaseBatchJob(*job_id); !released.ok()) script_path = released.error();
    }
    if (!script_path.ok()) {
      (void)RunCommand({"scancel", *job_id});  // it would sit held forever
      log::Error("cancelled job {}: it could not be started as planned", *job_id);
      return script_path.error();
    }

    // A job's log: slurm sbatch's own in the job's directory (a continuation's
    // too: slurm_submit.h), else the user's --output pattern as Slurm expands
    // it (with %N only once the job runs).
    std::string job_dir = plan->DirFor(*job_id);
    FollowOptions follow;
    follow.job_id = *job_id;
    if (own_output) {
      follow.log_path = [job_dir](const std::string& id, const std::string&) {
        return JoinPath(job_dir, "logs/slurm-" + id + ".out");
      };
    } else {
      JobFileNames names{*job_id, FlagValue(user_flags, "--job-name", "-J").value_or(plan->name),
                         Lookup(ProcessEnvironment(), "USER").value_or(""), ""};
      std::string pattern = *FlagValue(user_flags, "--output", "-o");
      follow.log_path = [pattern, names, submit_dir = SubmitDir(user_flags)](const std::string& id,
                                                                             const std::string& batch_host) {
        JobFileNames known = names;
        known.job_id = id;
        known.batch_host = batch_host;
        std::optional<std::string> path = ExpandJobFilePattern(pattern, known);
        return path ? AbsolutePath(*path, submit_dir) : std::string();
      };
    }
    follow.continued_as = [job_dir](const std::string& id) { return ContinuingJob(job_dir, id); };
    std::string log_path = follow.log_path(*job_id, "");
    std::cout << "submitted batch job " << *job_id << "\n"
              << "  script: " << *script_path << "\n"
              << "  log:    " << (!log_path.empty() ? log_path : "as your --output flag says") << "\n"
              << (user_hold ? "  held, as --hold asked: scontrol release " + *job_id + "\n" : "") << std::flush;
    if (!wait) return 0;
    return FollowJob(follow);
  }
};

RuntimeRegistration<SlurmRuntime> slurm_registration;

}  // namespace
}  // namespace primus::runtime
