#!/usr/bin/env python3
"""Data-parallel GPT pretraining example for primus-cli.

Each worker joins the job through torchrun's environment contract (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; primus-cli's
node agent sets them) and trains a byte-level GPT with DistributedDataParallel:
gloo on the CPU, nccl on GPUs. Without those variables it trains as a single
process. Checkpoints are atomic and resumable; metrics go to a JSON-lines file.

    /usr/bin/python3 examples/gpt/train.py --model tiny --steps 50      # one process
    primus-cli direct -- train pretrain --config examples/gpt/configs/tiny-cpu.yaml

See examples/gpt/README.md for every flag and how the experiment YAML maps to them.
Runs on Debian's torch 1.13 and on torch 2.x.
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time


def _default_cpu_threads(argv):
    """--threads N if given, else usable cores / LOCAL_WORLD_SIZE (at least 1)."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--threads=") else (
            argv[i + 1] if a == "--threads" and i + 1 < len(argv) else None)
        if value and value.isdigit() and int(value) > 0:
            return int(value)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("WORLD_SIZE") or 1)
    except ValueError:
        local_world = 1
    return max(1, cores // max(1, local_world))


# A multithreaded BLAS (OpenBLAS) reads its thread count when torch loads it; without
# this every worker would start one BLAS thread per core and oversubscribe the host.
if not os.environ.get("OMP_NUM_THREADS") and not os.environ.get("OPENBLAS_NUM_THREADS"):
    os.environ["OPENBLAS_NUM_THREADS"] = str(_default_cpu_threads(sys.argv[1:]))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoint as ckpt  # noqa: E402
import data as gdata  # noqa: E402
from model import GPT, MODEL_SIZES, config_for, describe  # noqa: E402

try:  # lets a torchelastic-style launcher read the failure from TORCHELASTIC_ERROR_FILE
    from torch.distributed.elastic.multiprocessing.errors import record
except Exception:  # pragma: no cover - torch without elastic
    def record(fn):
        return fn


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative_int(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def build_parser():
    p = argparse.ArgumentParser(
        prog="train.py",
        description="Data-parallel byte-level GPT pretraining (torchrun environment contract).")
    g = p.add_argument_group("model and data")
    g.add_argument("--model", choices=sorted(MODEL_SIZES), default="tiny", help="model size (default tiny)")
    g.add_argument("--seq-len", type=positive_int, help="tokens per sample (default: the model's context)")
    g.add_argument("--dropout", type=float, default=0.0, help="dropout probability (default 0)")
    g.add_argument("--data", metavar="PATH",
                   help="train on the bytes of this file (default: the generated corpus, see data.py)")
    g.add_argument("--corpus-bytes", type=positive_int, default=gdata.DEFAULT_CORPUS_BYTES,
                   help="size of the generated corpus (default %(default)s)")

    g = p.add_argument_group("optimization")
    g.add_argument("--steps", type=positive_int, default=200, help="optimizer steps in total (default 200)")
    g.add_argument("--micro-batch", type=positive_int, default=8, help="sequences per rank per micro-step")
    g.add_argument("--grad-accum", type=positive_int,
                   help="micro-steps per optimizer step (default: from --global-batch, else 1)")
    g.add_argument("--global-batch", type=positive_int,
                   help="sequences per optimizer step over all ranks; must equal "
                        "micro-batch x world size x grad-accum (checked; derives --grad-accum when omitted)")
    g.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (default 1e-3)")
    g.add_argument("--min-lr-ratio", type=float, default=0.1,
                   help="final lr of the cosine decay as a fraction of --lr (default 0.1)")
    g.add_argument("--warmup", type=non_negative_int, default=10, help="linear warmup steps (default 10)")
    g.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay on matrices (default 0.1)")
    g.add_argument("--grad-clip", type=float, default=1.0, help="clip the gradient norm; 0 disables (default 1)")
    g.add_argument("--seed", type=int, default=1234, help="seed for the weights and the data stream")
    g.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="compute dtype; bf16 is autocast mixed precision with fp32 weights")
    g.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="auto: cuda when available, else cpu (gloo on cpu, nccl on cuda)")
    g.add_argument("--threads", type=positive_int,
                   help="CPU threads per worker (default: OMP_NUM_THREADS if set, "
                        "else usable cores / LOCAL_WORLD_SIZE)")
    g.add_argument("--compile", action="store_true", help="torch.compile the model (torch 2.x; ignored on 1.x)")

    g = p.add_argument_group("parallelism (this example is data-parallel only: all must be 1)")
    for name in ("tensor", "pipeline", "context", "expert"):
        g.add_argument(f"--{name}-parallel", type=positive_int, default=1, metavar="N")

    g = p.add_argument_group("checkpoints")
    g.add_argument("--ckpt-dir", metavar="DIR", help="checkpoint directory (default: no checkpoints)")
    g.add_argument("--ckpt-interval", type=non_negative_int, default=0,
                   help="checkpoint every N steps; the last step is always saved when --ckpt-dir is set")
    g.add_argument("--keep-last", type=non_negative_int, default=2,
                   help="keep the newest K checkpoints; 0 keeps all (default 2)")
    g.add_argument("--resume", default="auto", metavar="auto|none|PATH",
                   help="auto: newest valid checkpoint in --ckpt-dir (if any); none: start fresh; "
                        "PATH: that checkpoint file (or the newest valid one in that directory)")
    g.add_argument("--resume-fallback", metavar="DIR",
                   help="with --resume auto: when --ckpt-dir holds no valid checkpoint, the newest valid one "
                        "in DIR (an earlier run's; its files are only read)")

    g = p.add_argument_group("logging")
    g.add_argument("--metrics-file", metavar="PATH", help="append per-step JSON lines here (rank 0)")
    g.add_argument("--log-interval", type=positive_int, default=10, help="print a progress line (step, loss, lr, tok/s, world size) on the first "
                        "step of every attempt, every N steps and on the last step")

    g = p.add_argument_group("test hooks (for launcher tests; act only on the first attempt, "
                                 "i.e. when TORCHELASTIC_RESTART_COUNT is 0 or unset)")
    g.add_argument("--fail-at-step", type=positive_int, metavar="N",
                   help="raise an exception at the start of step N")
    g.add_argument("--fail-rank", type=non_negative_int, metavar="R",
                   help="with --fail-at-step: only rank R fails (default: every rank)")
    g.add_argument("--crash-during-checkpoint", nargs="?", const="tmp", choices=["tmp", "torn"],
                   metavar="tmp|torn",
                   help="rank 0 SIGKILLs itself half-way through writing a checkpoint: tmp (default) "
                        "leaves step_N.pt.tmp; torn renames the half-written file to step_N.pt first")
    g.add_argument("--crash-checkpoint-step", type=positive_int, metavar="N",
                   help="the checkpoint step the crash hook fires at (default: the first one written)")
    g.add_argument("--slow-rank", type=non_negative_int, metavar="R",
                   help="rank R computes --slow-ms longer every step, on every attempt (a straggler)")
    g.add_argument("--slow-ms", type=non_negative_int, default=200, metavar="MS",
                   help="with --slow-rank: milliseconds added to each of its steps (default 200)")
    g.add_argument("--teardown", choices=["exit", "destroy"], default="exit",
                   help="exit (default): leave right after the final barrier; destroy: "
                        "destroy_process_group() and a normal interpreter exit, the usual way, which can "
                        "deadlock in torch 1.13's gloo teardown (kept to reproduce that hang)")
    return p


def read_env(parser):
    def get(name, default):
        value = os.environ.get(name, "")
        try:
            return int(value) if value != "" else default
        except ValueError:
            parser.error(f"environment variable {name}={value!r} is not an integer")
    world = get("WORLD_SIZE", 1)
    env = dict(rank=get("RANK", 0), world_size=world, local_rank=get("LOCAL_RANK", 0),
               local_world_size=get("LOCAL_WORLD_SIZE", world),
               restart_count=get("TORCHELASTIC_RESTART_COUNT", 0))
    env["distributed"] = world > 1 or "MASTER_ADDR" in os.environ
    return env


def validate(args, parser, env):
    world = env["world_size"]
    if world < 1 or not 0 <= env["rank"] < world:
        parser.error(f"bad environment: RANK={env['rank']} WORLD_SIZE={world}")
    for name in ("tensor", "pipeline", "context", "expert"):
        if getattr(args, f"{name}_parallel") != 1:
            parser.error(f"--{name}-parallel {getattr(args, name + '_parallel')}: this example trainer "
                         "is data-parallel only (tensor/pipeline/context/expert parallel sizes must be 1)")
    block = MODEL_SIZES[args.model]["block_size"]
    if args.seq_len is None:
        args.seq_len = block
    elif args.seq_len > block:
        parser.error(f"--seq-len {args.seq_len} exceeds the context of model {args.model} ({block})")
    if args.global_batch is not None:
        per_step = args.micro_batch * world
        if args.grad_accum is None:
            if args.global_batch % per_step:
                parser.error(f"--global-batch {args.global_batch} is not a multiple of micro-batch "
                             f"{args.micro_batch} x data-parallel size {world} = {per_step} (elastic jobs: "
                             "choose a global batch divisible by micro-batch x every world size they may run at)")
            args.grad_accum = args.global_batch // per_step
        elif args.global_batch != per_step * args.grad_accum:
            parser.error(f"--global-batch {args.global_batch} != micro-batch {args.micro_batch} x "
                         f"data-parallel size {world} x grad-accum {args.grad_accum} = "
                         f"{per_step * args.grad_accum}")
    if args.grad_accum is None:
        args.grad_accum = 1
    if args.lr <= 0:
        parser.error(f"--lr must be positive, got {args.lr}")
    if not 0.0 <= args.min_lr_ratio <= 1.0:
        parser.error(f"--min-lr-ratio must be in [0, 1], got {args.min_lr_ratio}")
    if not 0.0 <= args.dropout < 1.0:
        parser.error(f"--dropout must be in [0, 1), got {args.dropout}")
    if args.resume not in ("auto", "none") and env["rank"] == 0 and not os.path.exists(args.resume):
        parser.error(f"--resume {args.resume}: no such file or directory (use auto, none or a path)")
    if args.fail_rank is not None and args.fail_at_step is None:
        parser.error("--fail-rank needs --fail-at-step")
    if args.fail_rank is not None and args.fail_rank >= world and env["restart_count"] == 0:
        parser.error(f"--fail-rank {args.fail_rank} is not a rank of this {world}-worker job")
    if args.crash_checkpoint_step is not None and args.crash_during_checkpoint is None:
        parser.error("--crash-checkpoint-step needs --crash-during-checkpoint")
    if args.crash_during_checkpoint and not args.ckpt_dir:
        parser.error("--crash-during-checkpoint needs --ckpt-dir")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA/ROCm device (use --device cpu or auto)")
    if args.data and not os.path.isfile(args.data):
        parser.error(f"--data {args.data}: no such file")


class Heartbeat:
    """Touches PRIMUS_HEARTBEAT_FILE so the launcher's hang watchdog sees progress."""

    def __init__(self, path):
        self.path = path or None

    def beat(self):
        if not self.path:
            return
        try:
            os.utime(self.path, None)
        except FileNotFoundError:
            try:
                with open(self.path, "a"):
                    pass
            except OSError:
                pass
        except OSError:
            pass


def memory_bytes(device):
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    try:  # current resident set size
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def reference_blas_in_use():
    """True when torch's matrix products run on the netlib reference BLAS (Debian's default
    libblas3 for its torch package), which is about 10x slower than OpenBLAS."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line or "mkl" in line}
    except OSError:
        return False
    fast = any(k in lib for lib in libs for k in ("openblas", "mkl", "blis", "atlas"))
    return not fast and any("/blas/libblas.so" in lib for lib in libs)


def lr_lambda_for(args):
    def factor(done):   # lr multiplier for the step after `done` completed steps
        if args.warmup > 0 and done < args.warmup:
            return (done + 1) / args.warmup
        progress = min(1.0, (done - args.warmup) / max(1, args.steps - args.warmup))
        return args.min_lr_ratio + (1.0 - args.min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
    return factor


def make_optimizer(model, args, device):
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    extra = {}
    if device.type == "cuda":
        import inspect
        if "fused" in inspect.signature(torch.optim.AdamW).parameters:
            extra["fused"] = True
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-8, **extra)


def rank0_print(env, *a, **kw):
    if env["rank"] == 0:
        print(*a, **kw, flush=True)


def choose_checkpoint(args, env, device):
    """Rank 0 picks the checkpoint to resume from; every rank returns (step, state) or None."""
    if args.resume == "none":
        return None
    source = args.ckpt_dir if args.resume == "auto" else args.resume
    if not source:
        return None
    # Only rank 0 looks at the file system (other nodes may not see the directory yet).
    chosen_step, path, state, failure = -1, None, None, None
    if env["rank"] == 0:
        try:
            if args.resume == "auto" and not os.path.isdir(source):
                pass   # no checkpoint directory yet: a fresh start
            elif os.path.isdir(source):
                ckpt.remove_stale_temporaries(source)
                found = ckpt.find_latest_valid(source, quarantine=True)
                if found:
                    chosen_step, path, state = found
                elif args.resume != "auto":
                    raise ckpt.CheckpointError(f"no valid checkpoint in {source}")
            else:
                state = ckpt.load(source)
                chosen_step, path = state["step"], source
            if (chosen_step < 0 and args.resume == "auto" and args.resume_fallback
                    and os.path.isdir(args.resume_fallback)):
                # An earlier run's checkpoints: read, never renamed or removed.
                found = ckpt.find_latest_valid(args.resume_fallback, quarantine=False)
                if found:
                    chosen_step, path, state = found
        except ckpt.CheckpointError as e:
            failure = f"cannot resume from {source}: {e}"
            chosen_step = -2
    if env["distributed"]:
        # Broadcast the decision: the step (or -1: none, -2: rank 0 failed) and the path.
        box = [chosen_step, path]
        dist.broadcast_object_list(box, src=0)
        chosen_step, path = box
    if chosen_step == -2:
        raise RuntimeError(failure or "rank 0 could not load the checkpoint to resume from (see its log)")
    if chosen_step < 0:
        return None
    if state is None:   # ranks other than 0 load the file rank 0 chose
        try:
            state = ckpt.load(path)
        except ckpt.CheckpointError as e:
            raise RuntimeError(f"rank {env['rank']}: cannot read checkpoint {path} that rank 0 chose: {e} "
                               "(is the checkpoint directory on storage shared by all nodes?)") from e
    return chosen_step, path, state


class CommClock:
    """The communication of one step that compute did not hide.

    DDP starts a bucket's all-reduce as soon as its gradients are ready and
    waits for all of them at the end of backward. The last bucket is launched
    when this rank's backward compute is done, so the time from that launch to
    the last all-reduce's completion is time spent waiting for the slowest
    rank and the network; a straggler's own wait is short, the others' long.
    On a GPU both moments are CUDA events on the streams (a NCCL future
    completes on the host before the GPU is done), read after the step's
    synchronisation.
    """

    def __init__(self, cuda=False):
        self.cuda = cuda
        self.start_step()

    def start_step(self):
        self.last_launch = None
        self.last_done = None
        self.blocking_s = 0.0

    def _now(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def launched(self):
        self.last_launch = self._now()

    def done(self):
        self.last_done = self._now()

    def waited(self, seconds):
        self.blocking_s += seconds

    def exposed_s(self):
        hidden_gap = 0.0
        if self.last_launch is not None and self.last_done is not None:
            if self.cuda:
                hidden_gap = max(0.0, self.last_launch.elapsed_time(self.last_done) / 1000)
            else:
                hidden_gap = max(0.0, self.last_done - self.last_launch)
        return hidden_gap + self.blocking_s


def timed_allreduce_hook(clock, bucket):
    """DDP's default all-reduce (average of the gradients), timed by `clock`."""
    clock.launched()
    tensor = bucket.buffer()
    tensor.div_(dist.get_world_size())
    future = dist.all_reduce(tensor, async_op=True).get_future()

    def finished(fut):
        clock.done()
        return fut.value()[0]

    return future.then(finished)

@record
def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    env = read_env(parser)
    validate(args, parser, env)
    rank, world = env["rank"], env["world_size"]
    first_attempt = env["restart_count"] == 0
    heartbeat = Heartbeat(os.environ.get("PRIMUS_HEARTBEAT_FILE"))
    heartbeat.beat()

    # Device, threads, process group.
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if use_cuda:
        device = torch.device("cuda", env["local_rank"] % torch.cuda.device_count())
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    else:
        device = torch.device("cpu")
        if args.threads:
            torch.set_num_threads(args.threads)
        elif not os.environ.get("OMP_NUM_THREADS"):
            torch.set_num_threads(_default_cpu_threads([]))
    if env["distributed"]:
        dist.init_process_group("nccl" if use_cuda else "gloo", init_method="env://",
                                rank=rank, world_size=world)
    heartbeat.beat()

    # Model, optimizer, schedule, data.
    torch.manual_seed(args.seed)   # identical initial weights on every rank
    cfg = config_for(args.model, dropout=args.dropout)
    raw_model = GPT(cfg).to(device)
    optimizer = make_optimizer(raw_model, args, device)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda_for(args))
    tokens = gdata.load_tokens(args.data, args.corpus_bytes)
    sampler = gdata.TokenSampler(tokens, args.seq_len, args.micro_batch, args.seed, rank, device,
                                 world_size=world, grad_accum=args.grad_accum)
    global_batch = sampler.global_batch
    torch.manual_seed(args.seed + 7919 * (rank + 1))   # per-rank stream for dropout
    if use_cuda:
        torch.cuda.manual_seed(args.seed + 7919 * (rank + 1))

    # Resume.
    start_step = 0
    resumed = choose_checkpoint(args, env, device)
    if resumed:
        start_step, path, state = resumed
        saved_cfg = state["config"].get("model_config")
        if saved_cfg != describe(cfg):
            raise RuntimeError(f"checkpoint {path} was written for model {saved_cfg}, but --model "
                               f"{args.model} is {describe(cfg)}; use another --ckpt-dir or --resume none")
        raw_model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        sampler.load_state_dict(state["sampler"], step=start_step)
        sampler.step, sampler.micro = start_step, 0   # the checkpoint's step is the authority
        rng = state["rng"]
        if rank < len(rng["cpu"]):
            torch.set_rng_state(rng["cpu"][rank])
            if use_cuda and rng.get("cuda") and rng["cuda"][rank] is not None:
                torch.cuda.set_rng_state(rng["cuda"][rank], device)
        # Ranks beyond the old world size keep their fresh per-rank RNG (dropout only).
        saved = state["config"]
        saved_world = saved.get("world_size")
        saved_batch = saved.get("global_batch")
        if saved_batch is None and None not in (saved_world, saved.get("micro_batch"), saved.get("grad_accum")):
            saved_batch = saved_world * saved["micro_batch"] * saved["grad_accum"]
        same_stream = (saved_batch == global_batch and saved.get("seq_len") == args.seq_len
                       and state["sampler"].get("kind") == gdata.TokenSampler.KIND)
        if not same_stream:
            rank0_print(env, f"warning: resuming with global batch {global_batch} x {args.seq_len} tokens, "
                             f"the checkpoint used {saved_batch} x {saved.get('seq_len')} (or an older "
                             "sampler): the data stream differs from an uninterrupted run", file=sys.stderr)
        if saved_world != world:
            rank0_print(env, f"world size changed: {saved_world} -> {world} (restart "
                             f"{env['restart_count']}); global batch {saved_batch} -> {global_batch}, "
                             f"{args.micro_batch} x {args.grad_accum} sequences per rank per step")
        rank0_print(env, f"resumed from {path} at step {start_step}")
        del state
    heartbeat.beat()

    model = raw_model
    if args.compile:
        if hasattr(torch, "compile"):
            model = torch.compile(model)
        else:
            rank0_print(env, "warning: --compile ignored: this torch has no torch.compile", file=sys.stderr)
    comm_clock = CommClock(use_cuda)
    if env["distributed"]:
        model = DistributedDataParallel(model, device_ids=[device.index] if use_cuda else None)
        model.register_comm_hook(comm_clock, timed_allreduce_hook)

    tokens_per_step = args.micro_batch * args.seq_len * args.grad_accum * world
    rank0_print(env, f"gpt example: model {args.model} ({raw_model.num_parameters():,} parameters), "
                     f"{world} worker(s) on {device.type} ({'nccl' if use_cuda else 'gloo' if env['distributed'] else 'no process group'}), "
                     f"dtype {args.dtype}, global batch {global_batch} x "
                     f"{args.seq_len} tokens, steps {start_step + 1}..{args.steps}"
                     + ("" if use_cuda else f", {torch.get_num_threads()} thread(s) per worker"))
    if not use_cuda and rank == 0 and reference_blas_in_use():
        print("note: torch is using the reference (netlib) BLAS; CPU training is about 10x faster "
              "with OpenBLAS (Debian: apt-get install libopenblas0-pthread)", file=sys.stderr, flush=True)
    if start_step >= args.steps:
        rank0_print(env, f"nothing to do: the checkpoint is at step {start_step} >= --steps {args.steps} "
                         "(raise --steps to train on, or use --resume none or a new --ckpt-dir to start over)")
        if env["distributed"]:
            dist.barrier()
            leave_now(0)
        return 0

    metrics = None
    if rank == 0 and args.metrics_file:
        os.makedirs(os.path.dirname(os.path.abspath(args.metrics_file)), exist_ok=True)
        metrics = open(args.metrics_file, "a", buffering=1)
    # The agent's telemetry (docs/monitor.md): every rank, its own share of the tokens.
    agent_metrics = open(os.environ["PRIMUS_METRICS_FILE"], "a", buffering=1) \
        if os.environ.get("PRIMUS_METRICS_FILE") else None

    def autocast():
        if args.dtype == "bf16":
            return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    crash_armed = bool(args.crash_during_checkpoint) and first_attempt

    def save_checkpoint(step):
        nonlocal crash_armed
        heartbeat.beat()
        rng = {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state(device) if use_cuda else None}
        gathered = [rng]
        if env["distributed"]:
            gathered = [None] * world
            dist.all_gather_object(gathered, rng)
        if rank != 0:
            return
        crash = None
        if crash_armed and args.crash_checkpoint_step in (None, step):
            crash = args.crash_during_checkpoint
        state = {
            "format": ckpt.FORMAT,
            "step": step,
            "model": raw_model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "sampler": sampler.state_dict(),
            "rng": {"cpu": [r["cpu"] for r in gathered], "cuda": [r["cuda"] for r in gathered]},
            "config": {"model": args.model, "model_config": describe(cfg), "world_size": world,
                       "micro_batch": args.micro_batch, "grad_accum": args.grad_accum, "global_batch": global_batch,
                       "seq_len": args.seq_len, "seed": args.seed, "lr": args.lr, "steps": args.steps},
        }
        t0 = time.time()
        path = ckpt.save(state, args.ckpt_dir, step, args.keep_last, crash_mode=crash)
        print(f"saved checkpoint {path} ({os.path.getsize(path) / 1e6:.2f} MB in {time.time() - t0:.2f}s)",
              flush=True)
        heartbeat.beat()

    try:
        model.train()
        start = time.time()
        first_loss = last_loss = None
        step = start_step
        while step < args.steps:
            step += 1
            heartbeat.beat()
            if (args.fail_at_step == step and first_attempt
                    and (args.fail_rank is None or args.fail_rank == rank)):
                raise RuntimeError(f"test hook --fail-at-step {step}: rank {rank} fails on purpose "
                                   f"(attempt {env['restart_count']})")
            t0 = time.time()
            data_s = 0.0
            comm_clock.start_step()
            lr = optimizer.param_groups[0]["lr"]
            optimizer.zero_grad(set_to_none=True)
            loss_sum = torch.zeros((), device=device)
            for micro in range(args.grad_accum):
                t_data = time.perf_counter()
                x, y = sampler.next_batch()
                data_s += time.perf_counter() - t_data
                sync = micro == args.grad_accum - 1 or not env["distributed"]
                with (contextlib.nullcontext() if sync else model.no_sync()):
                    with autocast():
                        _, loss = model(x, y)
                    if args.slow_rank == rank:
                        time.sleep(args.slow_ms / 1000 / args.grad_accum)
                    (loss / args.grad_accum).backward()
                loss_sum += loss.detach()
            if args.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(raw_model.parameters(), args.grad_clip)
            optimizer.step()
            scheduler.step()
            mean_loss = loss_sum / args.grad_accum
            if env["distributed"]:
                if use_cuda:
                    torch.cuda.synchronize(device)  # the wait below is for the others, not our own queue
                t_reduce = time.perf_counter()
                dist.all_reduce(mean_loss)
                mean_loss /= world
                loss_value = mean_loss.item()
                comm_clock.waited(time.perf_counter() - t_reduce)
            else:
                loss_value = mean_loss.item()   # also waits for the GPU
            if not math.isfinite(loss_value):
                raise FloatingPointError(f"loss is {loss_value} at step {step}")
            dt = max(time.time() - t0, 1e-9)
            last_loss = loss_value
            if first_loss is None:
                first_loss = loss_value
            if agent_metrics:
                # Where the step went: the wait for the others in the gradient and
                # loss reductions (what compute did not hide), the data, the rest.
                comm_s = min(comm_clock.exposed_s(), dt)
                data_s = min(data_s, dt - comm_s)
                agent_metrics.write(json.dumps({
                    "step": step, "total_steps": args.steps, "loss": round(loss_value, 6),
                    "tokens_per_s": round(tokens_per_step / world / dt, 1), "step_time_s": round(dt, 4),
                    "time_parts": {"compute": round(dt - comm_s - data_s, 5), "communication": round(comm_s, 5),
                                   "data": round(data_s, 5)}}) + "\n")
            if rank == 0:
                if metrics:
                    metrics.write(json.dumps({
                        "step": step, "loss": round(loss_value, 6), "lr": lr,
                        "tokens_per_s": round(tokens_per_step / dt, 1), "elapsed_s": round(time.time() - start, 3),
                        "mem_bytes": memory_bytes(device), "world_size": world, "time": round(time.time(), 3),
                        "restart_count": env["restart_count"]}) + "\n")
                if step == start_step + 1 or step % args.log_interval == 0 or step == args.steps:
                    print(f"step {step}/{args.steps} loss {loss_value:.4f} lr {lr:.2e} "
                          f"tok/s {tokens_per_step / dt:.0f} world {world}", flush=True)
            if args.ckpt_dir and ((args.ckpt_interval and step % args.ckpt_interval == 0) or step == args.steps):
                save_checkpoint(step)
    finally:
        if metrics:
            metrics.close()
        if agent_metrics:
            agent_metrics.close()
    if env["distributed"]:
        dist.barrier()
    rank0_print(env, f"done: {step - start_step} steps ({start_step + 1}..{step}) on {world} worker(s) in "
                     f"{time.time() - start:.1f}s, loss {first_loss:.4f} -> {last_loss:.4f}")
    if env["distributed"]:
        if args.teardown == "destroy":
            dist.destroy_process_group()
            return 0   # main()'s locals (DDP and its process group) die on the way out
        # Every rank passed the final barrier: checkpoints and metrics are
        # written and closed. Leave here, while main()'s locals are still alive
        # (see leave_now).
        leave_now(0)
    return 0


def leave_now(code):
    """Ends a distributed worker at once, without tearing torch down.

    torch 1.13 can deadlock in teardown: when the last reference to the gloo
    process group is dropped (destroy_process_group(), or DDP's Reducer dying
    with main()'s locals), ~ProcessGroupGloo joins its worker threads while
    holding the GIL, and a worker thread freeing a tensor waits for that GIL.
    The rank then hangs forever after printing "done". Nothing is left to
    save when this is called, so skip destructors and atexit handlers
    altogether: the kernel closes the sockets and the peers are past the
    barrier already."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit as e:   # argparse errors (2), sys.exit(...)
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:  # as Python itself does: end by SIGINT, so the launcher sees the signal
        import signal
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 128 + signal.SIGINT
    except BaseException:     # @record has written the error file; show the traceback
        import traceback
        traceback.print_exc()
        code = 1
    # Also on failure: an exception leaves main()'s frames (and the process
    # group) alive in the traceback, and interpreter shutdown would free them
    # with the same teardown deadlock as above.
    leave_now(code)
