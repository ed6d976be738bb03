"""Tests of the example GPT trainer (examples/gpt).

    /usr/bin/python3 -m unittest tests/python/test_gpt_trainer.py

Needs torch (Debian's 1.13 or 2.x) and numpy; no GPU, no torchrun: two-worker
runs use the small launcher below (torchrun's environment contract, one
subprocess per rank, 127.0.0.1 and a free port). Runs in well under a minute
on a 2-core machine: models are tiny, runs are a few dozen steps, one thread
per process.
"""
import contextlib
import io
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GPT_DIR = REPO / "examples" / "gpt"
TRAIN = GPT_DIR / "train.py"
PYTHON = sys.executable
sys.path.insert(0, str(GPT_DIR))

import torch  # noqa: E402

import checkpoint as ckpt  # noqa: E402
import data as gdata  # noqa: E402
import model as gmodel  # noqa: E402
import train  # noqa: E402

# Small, quick runs: tiny model, short sequences, one thread.
FAST = ["--model", "tiny", "--micro-batch", "4", "--seq-len", "32", "--threads", "1",
        "--lr", "3e-3", "--warmup", "2", "--log-interval", "5", "--corpus-bytes", "65536"]

_ENV_KEYS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
             "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_ERROR_FILE", "PRIMUS_HEARTBEAT_FILE")


@contextlib.contextmanager
def environment(**values):
    """Run with exactly these launcher variables set (the others removed)."""
    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    for k in _ENV_KEYS:
        os.environ.pop(k, None)
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_main(args, **env):
    """train.main(args) in this process, single worker; returns (rc, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with environment(**env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = train.main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc, args, workdir, env=None, timeout=120):
    """Start nproc workers with torchrun's environment; returns [(returncode, log)] by rank.

    When a worker fails the others get a few seconds to notice, then are killed
    (what a real launcher does).
    """
    port = free_port()
    procs, logs = [], []
    for rank in range(nproc):
        e = dict(os.environ)
        for k in _ENV_KEYS:
            e.pop(k, None)
        e.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                 WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc), OMP_NUM_THREADS="1")
        for k, v in (env or {}).items():
            e[k] = v.format(rank=rank)
        log_path = os.path.join(workdir, f"rank{rank}.{time.time_ns()}.log")
        logs.append(log_path)
        with open(log_path, "w") as log:
            procs.append(subprocess.Popen([PYTHON, str(TRAIN)] + [str(a) for a in args], env=e,
                                          stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO)))
    started = time.time()
    failed_at, note = None, ""
    while any(p.poll() is None for p in procs):
        if failed_at is None and any(p.poll() not in (None, 0) for p in procs):
            failed_at = time.time()
        overdue = time.time() - started > timeout
        if overdue or (failed_at and time.time() - failed_at > 10):
            note = (f"\n[launcher: killed the remaining workers after {time.time() - started:.1f}s: "
                    f"{'timeout' if overdue else 'a worker failed 10s earlier'}]")
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    results = []
    for p, path in zip(procs, logs):
        with open(path) as f:
            results.append((p.wait(), f.read() + note))
    return results


class ModelTest(unittest.TestCase):
    def test_shapes_and_weight_tying(self):
        torch.manual_seed(0)
        m = gmodel.GPT(gmodel.config_for("tiny"))
        idx = torch.randint(0, 256, (3, 17))
        logits, loss = m(idx, torch.randint(0, 256, (3, 17)))
        self.assertEqual(tuple(logits.shape), (3, 17, 256))
        self.assertEqual(loss.dim(), 0)
        self.assertAlmostEqual(loss.item(), torch.log(torch.tensor(256.0)).item(), delta=0.3)
        self.assertIs(m.lm_head.weight, m.wte.weight)
        with self.assertRaises(ValueError):
            m(torch.zeros(1, 65, dtype=torch.long))   # beyond the context of 64

    def test_sizes(self):
        self.assertEqual(gmodel.MODEL_SIZES["gpt2-124m"],
                         dict(n_layer=12, n_head=12, n_embd=768, block_size=1024))
        cfg = gmodel.config_for("small")
        self.assertEqual((cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.vocab_size), (6, 6, 384, 256))
        with self.assertRaises(ValueError):
            gmodel.config_for("huge")

    def test_causal_masking(self):
        torch.manual_seed(0)
        for use_sdpa in (False, True):
            m = gmodel.GPT(gmodel.config_for("tiny"), use_sdpa=use_sdpa).eval()
            idx = torch.randint(0, 256, (2, 40))
            changed = idx.clone()
            changed[:, 25:] = torch.randint(0, 256, (2, 15))
            with torch.no_grad():
                a, _ = m(idx)
                b, _ = m(changed)
            self.assertTrue(torch.allclose(a[:, :25], b[:, :25], atol=1e-6),
                            "future tokens changed earlier logits")
            self.assertFalse(torch.allclose(a[:, 25:], b[:, 25:]))


class DataTest(unittest.TestCase):
    def test_corpus_is_deterministic_text(self):
        a = gdata.generate_corpus(target_bytes=20000)
        self.assertEqual(a, gdata.generate_corpus(target_bytes=20000))
        self.assertEqual(len(a), 20000)
        self.assertTrue(a.decode("ascii").startswith("Chapter 1."))
        self.assertEqual(len(gdata.load_tokens()), gdata.DEFAULT_CORPUS_BYTES)

    def test_sampler_shards_one_global_batch_and_resumes(self):
        tokens = gdata.load_tokens(corpus_bytes=30000)
        # World 2, one micro-batch of 4 each: the ranks take the halves of step 0's global batch of 8.
        s0 = gdata.TokenSampler(tokens, 16, 4, seed=7, rank=0, world_size=2)
        s1 = gdata.TokenSampler(tokens, 16, 4, seed=7, rank=1, world_size=2)
        x0, y0 = s0.next_batch()
        x1, _ = s1.next_batch()
        self.assertFalse(torch.equal(x0, x1))
        self.assertTrue(torch.equal(x0[:, 1:], y0[:, :-1]))   # targets are inputs shifted by one
        # The same global batch at other world sizes: 1 rank x 2 micro-batches, 4 ranks x 2 sequences.
        one = gdata.TokenSampler(tokens, 16, 4, seed=7, rank=0, world_size=1, grad_accum=2)
        self.assertTrue(torch.equal(torch.cat([one.next_batch()[0], one.next_batch()[0]]), torch.cat([x0, x1])))
        four = [gdata.TokenSampler(tokens, 16, 2, seed=7, rank=r, world_size=4).next_batch()[0] for r in range(4)]
        self.assertTrue(torch.equal(torch.cat(four), torch.cat([x0, x1])))
        self.assertEqual(one.state_dict()["step"], 1)
        # Resuming: the checkpoint's seed and step continue the stream, at any world size.
        state = s0.state_dict()
        stream = [torch.cat([s0.next_batch()[0], s1.next_batch()[0]]) for _ in range(3)]
        resumed = gdata.TokenSampler(tokens, 16, 4, seed=999, rank=0, world_size=1, grad_accum=2)
        resumed.load_state_dict(state)
        for expected in stream:
            self.assertTrue(torch.equal(torch.cat([resumed.next_batch()[0], resumed.next_batch()[0]]), expected))
        # A state of the old per-rank sampler is positioned at the checkpoint's step.
        old = gdata.TokenSampler(tokens, 16, 4, seed=1, rank=0)
        old.load_state_dict({"kind": "random-windows-v1", "seed": 7, "next_index": 10}, step=5)
        self.assertEqual((old.seed, old.step), (7, 5))
        with self.assertRaises(ValueError):
            old.load_state_dict({"kind": "random-windows-v1", "seed": 7, "next_index": 10})


class ScheduleTest(unittest.TestCase):
    def test_warmup_then_cosine(self):
        args = train.build_parser().parse_args(["--steps", "100", "--warmup", "10", "--min-lr-ratio", "0.1"])
        f = train.lr_lambda_for(args)
        self.assertAlmostEqual(f(0), 0.1)
        self.assertAlmostEqual(f(9), 1.0)
        self.assertAlmostEqual(f(10), 1.0)
        self.assertAlmostEqual(f(55), 0.55)
        self.assertAlmostEqual(f(100), 0.1)


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def state(self, step, **extra):
        s = {"format": ckpt.FORMAT, "step": step, "model": {"w": torch.ones(3) * step}, "optimizer": {},
             "scheduler": {}, "sampler": {}, "rng": {"cpu": [torch.get_rng_state()]}, "config": {}}
        s.update(extra)
        return s

    def test_atomic_write_and_keep_last(self):
        for step in (10, 20, 30, 40):
            path = ckpt.save(self.state(step), self.dir, step, keep_last=2)
            self.assertEqual(path, os.path.join(self.dir, f"step_{step}.pt"))
        self.assertEqual(sorted(os.listdir(self.dir)), ["step_30.pt", "step_40.pt"])   # no *.tmp left
        self.assertEqual(ckpt.load(os.path.join(self.dir, "step_40.pt"))["step"], 40)
        ckpt.save(self.state(50), self.dir, 50, keep_last=0)   # 0 keeps everything
        self.assertEqual(len(ckpt.list_checkpoints(self.dir)), 3)

    def test_written_through_a_temporary_then_renamed(self):
        seen = []
        real_replace = os.replace

        def spy(src, dst):
            seen.append((os.path.basename(src), os.path.basename(dst), os.path.getsize(src)))
            return real_replace(src, dst)

        ckpt.os.replace = spy
        try:
            ckpt.save(self.state(5), self.dir, 5, keep_last=2)
        finally:
            ckpt.os.replace = real_replace
        self.assertEqual(seen[0][:2], ("step_5.pt.tmp", "step_5.pt"))
        self.assertGreater(seen[0][2], 0)

    def test_corrupt_and_partial_checkpoints_are_skipped(self):
        ckpt.save(self.state(10), self.dir, 10, keep_last=0)
        with open(os.path.join(self.dir, "step_10.pt"), "rb") as f:
            good = f.read()
        with open(os.path.join(self.dir, "step_20.pt"), "wb") as f:
            f.write(good[: len(good) // 2])                      # truncated
        with open(os.path.join(self.dir, "step_30.pt"), "wb") as f:
            f.write(b"not a checkpoint")                          # unreadable
        torch.save({"step": 40, "model": {}}, os.path.join(self.dir, "step_40.pt"))   # missing keys
        open(os.path.join(self.dir, "step_50.pt"), "wb").close()  # empty
        with open(os.path.join(self.dir, "step_60.pt.tmp"), "wb") as f:   # interrupted write
            f.write(good)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            step, path, state = ckpt.find_latest_valid(self.dir)
        self.assertEqual((step, state["step"]), (10, 10))
        log = err.getvalue()
        for bad in ("step_20.pt", "step_30.pt", "step_40.pt", "step_50.pt"):
            self.assertIn(os.path.join(self.dir, bad), log)
        self.assertIn("missing required keys", log)
        self.assertNotIn("step_60", log)


    def test_a_checkpoint_another_user_could_have_written_is_never_loaded(self):
        ckpt.save(self.state(10), self.dir, 10, keep_last=0)
        ckpt.save(self.state(20), self.dir, 20, keep_last=0)
        newest = os.path.join(self.dir, "step_20.pt")
        os.chmod(newest, 0o666)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            step, _, _ = ckpt.find_latest_valid(self.dir)
        self.assertEqual(step, 10)
        self.assertIn(f"skipping checkpoint {newest}: other users may write to it (mode 0666)", err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()):
            ckpt.find_latest_valid(self.dir, quarantine=True)
        self.assertTrue(os.path.exists(newest), "an untrusted checkpoint is skipped, never renamed as corrupt")
        if os.geteuid() != 0:
            self.skipTest("needs root to give a checkpoint to another user")
        os.chmod(newest, 0o600)
        os.chown(newest, 65534, 65534)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            step, _, _ = ckpt.find_latest_valid(self.dir)
        self.assertEqual(step, 10)
        self.assertIn("it is owned by uid 65534, not by you", err.getvalue())

    def test_a_link_planted_as_the_temporary_is_not_written_through(self):
        victim = os.path.join(self.dir, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.symlink(victim, os.path.join(self.dir, "step_5.pt.tmp"))
        ckpt.save(self.state(5), self.dir, 5, keep_last=0)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(ckpt.load(os.path.join(self.dir, "step_5.pt"))["step"], 5)
        self.assertEqual(os.stat(os.path.join(self.dir, "step_5.pt")).st_mode & 0o777, 0o600)


class TrainingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_single_process_training_reduces_loss(self):
        metrics = os.path.join(self.dir, "m.jsonl")
        heartbeat = os.path.join(self.dir, "hb")
        rc, out, _ = run_main(FAST + ["--steps", "25", "--metrics-file", metrics], PRIMUS_HEARTBEAT_FILE=heartbeat)
        self.assertEqual(rc, 0)
        rows = read_metrics(metrics)
        self.assertEqual([r["step"] for r in rows], list(range(1, 26)))
        for key in ("step", "loss", "lr", "tokens_per_s", "elapsed_s", "mem_bytes", "world_size", "time"):
            self.assertIn(key, rows[0])
        self.assertEqual(rows[0]["world_size"], 1)
        self.assertGreater(rows[0]["mem_bytes"], 0)
        self.assertLess(rows[-1]["loss"], 0.7 * rows[0]["loss"], rows)
        self.assertIn("step 25/25 loss", out)
        self.assertTrue(os.path.exists(heartbeat))

    def test_resume_continues_steps_and_data_stream(self):
        ref_dir, run_dir = os.path.join(self.dir, "ref"), os.path.join(self.dir, "run")
        common = FAST + ["--steps", "16", "--ckpt-interval", "8", "--keep-last", "2"]
        rc, _, _ = run_main(common + ["--ckpt-dir", ref_dir, "--metrics-file", ref_dir + ".jsonl"])
        self.assertEqual(rc, 0)
        run = common + ["--ckpt-dir", run_dir, "--metrics-file", run_dir + ".jsonl", "--fail-at-step", "12"]
        with self.assertRaisesRegex(RuntimeError, "fail-at-step 12"):
            run_main(run, TORCHELASTIC_RESTART_COUNT=0)
        self.assertEqual([s for s, _ in ckpt.list_checkpoints(run_dir)], [8])
        # The restarted attempt: the hook is off, training resumes from step 8.
        rc, out, _ = run_main(run, TORCHELASTIC_RESTART_COUNT=1)
        self.assertEqual(rc, 0)
        self.assertIn("at step 8", out)
        ref = {r["step"]: r["loss"] for r in read_metrics(ref_dir + ".jsonl")}
        rows = read_metrics(run_dir + ".jsonl")
        second = [r for r in rows if r["restart_count"] == 1]
        self.assertEqual([r["step"] for r in second], list(range(9, 17)))
        for r in second:   # same data and same state: the same losses as the uninterrupted run
            self.assertAlmostEqual(r["loss"], ref[r["step"]], places=4)
        a = ckpt.load(os.path.join(ref_dir, "step_16.pt"))
        b = ckpt.load(os.path.join(run_dir, "step_16.pt"))
        self.assertEqual(b["sampler"]["step"], 16)
        for k in a["model"]:
            self.assertTrue(torch.allclose(a["model"][k], b["model"][k], atol=1e-5), k)
        # Resuming a finished run does nothing and succeeds.
        rc, out, _ = run_main(common + ["--ckpt-dir", run_dir])
        self.assertEqual((rc, "nothing to do" in out), (0, True))

    def test_resume_skips_corrupt_newest_checkpoint(self):
        ck = os.path.join(self.dir, "ck")
        rc, _, _ = run_main(FAST + ["--steps", "6", "--ckpt-interval", "3", "--ckpt-dir", ck])
        self.assertEqual(rc, 0)
        with open(os.path.join(ck, "step_6.pt"), "r+b") as f:
            f.truncate(1000)
        rc, out, err = run_main(FAST + ["--steps", "8", "--ckpt-interval", "3", "--ckpt-dir", ck])
        self.assertEqual(rc, 0)
        self.assertIn(f"skipping checkpoint {os.path.join(ck, 'step_6.pt')}", err)
        self.assertIn("at step 3", out)
        self.assertIn("steps 4..8", out)
        self.assertEqual(ckpt.load(os.path.join(ck, "step_8.pt"))["step"], 8)
        # An explicitly named checkpoint that is invalid is an error, not a fresh start.
        with self.assertRaisesRegex(RuntimeError, "cannot resume from .*step_6.pt.corrupt"):
            run_main(FAST + ["--steps", "9", "--resume", os.path.join(ck, "step_6.pt.corrupt")])

    def test_bad_flags_exit_2(self):
        for bad in (["--steps", "0"], ["--model", "huge"], ["--seq-len", "65"], ["--dtype", "fp8"],
                    ["--global-batch", "10", "--micro-batch", "4"], ["--tensor-parallel", "2"],
                    ["--resume", "/nonexistent/x.pt"], ["--fail-rank", "0"]):
            err = io.StringIO()
            with self.subTest(bad=bad), contextlib.redirect_stderr(err), environment():
                with self.assertRaises(SystemExit) as cm:
                    train.main(bad)
                self.assertEqual(cm.exception.code, 2)
                self.assertIn("error:", err.getvalue())

    def test_crash_during_checkpoint_leaves_previous_checkpoint_usable(self):
        ck = os.path.join(self.dir, "ck")
        args = [PYTHON, str(TRAIN)] + FAST + ["--steps", "9", "--ckpt-interval", "3", "--ckpt-dir", ck,
                                              "--crash-during-checkpoint", "--crash-checkpoint-step", "6"]
        env = {k: v for k, v in os.environ.items() if k not in _ENV_KEYS}
        first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(first.returncode, -signal.SIGKILL, first.stderr)
        self.assertEqual(sorted(os.listdir(ck)), ["step_3.pt", "step_6.pt.tmp"])
        env["TORCHELASTIC_RESTART_COUNT"] = "1"
        second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("removing partial checkpoint", second.stderr)
        self.assertIn("at step 3", second.stdout)
        self.assertEqual(sorted(os.listdir(ck)), ["step_6.pt", "step_9.pt"])


class DistributedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_two_workers_torn_checkpoint_then_restart(self):
        ck, metrics = os.path.join(self.dir, "ck"), os.path.join(self.dir, "m.jsonl")
        args = FAST + ["--steps", "8", "--ckpt-interval", "3", "--ckpt-dir", ck, "--metrics-file", metrics,
                       "--global-batch", "8", "--crash-during-checkpoint", "torn", "--crash-checkpoint-step", "6"]
        env = {"TORCHELASTIC_RESTART_COUNT": "0", "PRIMUS_HEARTBEAT_FILE": os.path.join(self.dir, "hb{rank}")}
        results = launch(2, args, self.dir, env)
        self.assertEqual(results[0][0], -signal.SIGKILL, results[0][1])
        self.assertNotEqual(results[1][0], 0, results[1][1])
        self.assertTrue(os.path.exists(os.path.join(self.dir, "hb1")))
        self.assertEqual(sorted(os.listdir(ck)), ["step_3.pt", "step_6.pt"])   # step_6.pt is torn
        env["TORCHELASTIC_RESTART_COUNT"] = "1"
        results = launch(2, args, self.dir, env)
        self.assertEqual([rc for rc, _ in results], [0, 0], results)
        log0 = results[0][1]
        self.assertIn(f"skipping checkpoint {os.path.join(ck, 'step_6.pt')}", log0)
        self.assertIn("at step 3", log0, log0)
        self.assertIn("2 worker(s) on cpu (gloo)", log0)
        rows = [r for r in read_metrics(metrics) if r["restart_count"] == 1]
        self.assertEqual([r["step"] for r in rows], list(range(4, 9)))
        self.assertEqual({r["world_size"] for r in rows}, {2})
        self.assertEqual(sorted(os.listdir(ck)), ["step_6.pt", "step_6.pt.corrupt", "step_8.pt"])

    def test_elastic_restarts_resume_at_new_world_sizes(self):
        """2 workers fail after a checkpoint, 3 workers resume (restart 1), then
        one process resumes an earlier checkpoint (restart 2). The global batch
        is fixed (12 = 2 x 2 x 3 = 2 x 3 x 2 = 2 x 1 x 6), so every step trains
        on the same sequences as an uninterrupted single-process run."""
        ck, metrics = os.path.join(self.dir, "ck"), os.path.join(self.dir, "m.jsonl")
        common = FAST + ["--micro-batch", "2", "--global-batch", "12", "--steps", "8", "--ckpt-interval", "3",
                         "--keep-last", "0", "--log-interval", "100"]
        rc, _, _ = run_main(common + ["--resume", "none", "--metrics-file", os.path.join(self.dir, "ref.jsonl")])
        self.assertEqual(rc, 0)
        ref = {r["step"]: r["loss"] for r in read_metrics(os.path.join(self.dir, "ref.jsonl"))}

        run = common + ["--ckpt-dir", ck, "--metrics-file", metrics, "--fail-at-step", "5"]
        results = launch(2, run, self.dir, {"TORCHELASTIC_RESTART_COUNT": "0"})
        self.assertTrue(all(rc != 0 for rc, _ in results), results)
        self.assertIn("fail-at-step 5", results[0][1])
        self.assertEqual([s for s, _ in ckpt.list_checkpoints(ck)], [3])

        results = launch(3, run, self.dir, {"TORCHELASTIC_RESTART_COUNT": "1"})
        self.assertEqual([rc for rc, _ in results], [0, 0, 0], results)
        log0 = results[0][1]
        self.assertIn("world size changed: 2 -> 3 (restart 1); global batch 12 -> 12", log0)
        self.assertNotIn("data stream differs", log0)
        self.assertIn("resumed from", log0)
        self.assertRegex(log0, r"step 4/8 loss [0-9.]+ lr \S+ tok/s \d+ world 3\n")   # first step at world 3
        self.assertRegex(log0, r"step 8/8 loss [0-9.]+ lr \S+ tok/s \d+ world 3\n")

        rc, out, err = run_main(run + ["--resume", os.path.join(ck, "step_6.pt")], TORCHELASTIC_RESTART_COUNT=2)
        self.assertEqual(rc, 0, err)
        self.assertIn("world size changed: 3 -> 1 (restart 2)", out)
        self.assertIn("resumed from", out)
        self.assertRegex(out, r"step 7/8 loss [0-9.]+ lr \S+ tok/s \d+ world 1\n")

        rows = read_metrics(metrics)
        by_attempt = {n: [(r["step"], r["world_size"]) for r in rows if r["restart_count"] == n] for n in range(3)}
        self.assertEqual(by_attempt, {0: [(1, 2), (2, 2), (3, 2), (4, 2)],
                                      1: [(4, 3), (5, 3), (6, 3), (7, 3), (8, 3)],
                                      2: [(7, 1), (8, 1)]})
        for r in rows:   # finite, and the same losses as the uninterrupted single-process run
            self.assertTrue(math.isfinite(r["loss"]), r)
            self.assertAlmostEqual(r["loss"], ref[r["step"]], places=3, msg=r)
        state = ckpt.load(os.path.join(ck, "step_8.pt"))
        self.assertEqual((state["step"], state["sampler"]["step"], state["config"]["world_size"]), (8, 8, 1))
        self.assertEqual(state["config"]["global_batch"], 12)

    def test_failing_rank_exits_nonzero_with_error_file(self):
        args = FAST + ["--steps", "6", "--fail-at-step", "3", "--fail-rank", "1"]
        env = {"TORCHELASTIC_ERROR_FILE": os.path.join(self.dir, "error{rank}.json")}
        results = launch(2, args, self.dir, env)
        self.assertNotEqual(results[1][0], 0, results[1][1])
        self.assertIn("test hook --fail-at-step 3: rank 1", results[1][1])
        self.assertNotEqual(results[0][0], 0, results[0][1])   # rank 0 loses its peer
        with open(os.path.join(self.dir, "error1.json")) as f:
            self.assertIn("fail-at-step 3", f.read())


if __name__ == "__main__":
    unittest.main()
