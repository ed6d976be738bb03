"""Atomic, validated checkpoints: <dir>/step_<N>.pt.

Writing (rank 0 only): the state goes to <dir>/step_<N>.pt.tmp, which is
flushed and fsync'ed, renamed to step_<N>.pt, and then the directory is
fsync'ed so the rename itself is durable. Only after that are checkpoints
beyond the newest `keep_last` deleted, so a crash at any moment leaves at
least the previous good checkpoint on disk.

Reading: `find_latest_valid` walks step_*.pt from the newest down and takes
the first one that torch.load can read and that has every required key;
each rejected file gets a warning naming it and saying why. Leftover
*.pt.tmp files (from a crash during a write) are never considered, and
neither is a file another user owns or may write to: torch.load runs the
code a checkpoint holds, so on a shared node only our own files are loaded.
"""
import io
import os
import re
import signal
import stat
import sys

import torch

FORMAT = "primus-gpt-example/1"
REQUIRED_KEYS = ("format", "step", "model", "optimizer", "scheduler", "sampler", "rng", "config")
_NAME = re.compile(r"^step_(\d+)\.pt$")
_TMP = re.compile(r"^step_(\d+)\.pt\.tmp$")


class CheckpointError(Exception):
    """A checkpoint file that cannot be used (truncated, unreadable, incomplete)."""


class CheckpointUntrusted(CheckpointError):
    """A checkpoint another user owns or may write to: never loaded, but not damaged either (never quarantined)."""


def warn(msg):
    print(f"warning: {msg}", file=sys.stderr, flush=True)


def checkpoint_path(ckpt_dir, step):
    return os.path.join(ckpt_dir, f"step_{step}.pt")


def list_checkpoints(ckpt_dir):
    """[(step, path)] of the step_<N>.pt files in ckpt_dir, oldest first."""
    if not ckpt_dir or not os.path.isdir(ckpt_dir):
        return []
    found = []
    for name in os.listdir(ckpt_dir):
        m = _NAME.match(name)
        if m:
            found.append((int(m.group(1)), os.path.join(ckpt_dir, name)))
    return sorted(found)


def stale_temporaries(ckpt_dir):
    if not ckpt_dir or not os.path.isdir(ckpt_dir):
        return []
    return sorted(os.path.join(ckpt_dir, n) for n in os.listdir(ckpt_dir) if _TMP.match(n))


def remove_stale_temporaries(ckpt_dir):
    """Delete step_*.pt.tmp left by an interrupted write (call before writing)."""
    for path in stale_temporaries(ckpt_dir):
        warn(f"removing partial checkpoint {path} left by an interrupted write")
        try:
            os.remove(path)
        except OSError as e:
            warn(f"could not remove {path}: {e}")


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass   # some filesystems refuse fsync on directories
    finally:
        os.close(fd)


def open_own_file(path):
    """The file at path opened for reading, when it is a regular file of ours that no one else may write.

    Opened first (never through a link), then checked, so what is checked is what is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise CheckpointError(f"cannot open it ({e.strerror or e})") from e
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "it is not a regular file"
    elif info.st_uid != os.geteuid():
        problem = (f"it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}): a checkpoint another "
                   f"user wrote is never loaded (torch.load runs the code it holds)")
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"other users may write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    if problem:
        os.close(fd)
        raise CheckpointUntrusted(problem)
    return os.fdopen(fd, "rb")


def torch_load(path_or_file):
    """torch.load on the CPU of a checkpoint this trainer wrote.

    weights_only=False is explicit because torch >= 2.6 defaults to True, and
    torch 1.13's weights-only unpickler rejects plain Python floats (which the
    optimizer state holds), which would make every valid checkpoint look corrupt.
    Only load checkpoints from directories you trust.
    """
    try:
        return torch.load(path_or_file, map_location="cpu", weights_only=False)
    except TypeError:   # torch older than 1.13: no weights_only argument
        return torch.load(path_or_file, map_location="cpu")


def _crash(f, tmp_path, final_path, data, mode):
    """Test hook: write half the checkpoint, make it durable, and SIGKILL ourselves.

    mode "tmp": the partial file stays step_<N>.pt.tmp (what a real crash leaves).
    mode "torn": it is renamed to step_<N>.pt first, to simulate storage without
    atomic rename (so resume has to detect and skip a truncated checkpoint).
    """
    f.write(data[: len(data) // 2])
    f.flush()
    os.fsync(f.fileno())
    if mode == "torn":
        os.rename(tmp_path, final_path)
        _fsync_dir(os.path.dirname(final_path))
    print(f"test hook --crash-during-checkpoint={mode}: killing pid {os.getpid()} after "
          f"writing {len(data) // 2} of {len(data)} bytes of {final_path}",
          file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def save(state, ckpt_dir, step, keep_last, crash_mode=None):
    """Write state atomically as step_<step>.pt; then keep only the newest keep_last."""
    os.makedirs(ckpt_dir, mode=0o700, exist_ok=True)
    final_path = checkpoint_path(ckpt_dir, step)
    tmp_path = final_path + ".tmp"
    try:
        os.unlink(tmp_path)   # a leftover, or a link planted there: removed, never written through
    except FileNotFoundError:
        pass
    fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        if crash_mode:
            buf = io.BytesIO()
            torch.save(state, buf)
            _crash(f, tmp_path, final_path, buf.getvalue(), crash_mode)
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp_path, final_path)
    _fsync_dir(ckpt_dir)
    prune(ckpt_dir, keep_last, step)
    return final_path


def prune(ckpt_dir, keep_last, current_step):
    """Delete all but the newest keep_last checkpoints up to current_step.

    keep_last <= 0 keeps all. Checkpoints beyond current_step (left by a run
    that was resumed from an older checkpoint on purpose) are not touched; they
    are overwritten when training reaches their step.
    """
    if keep_last <= 0:
        return
    older = [c for c in list_checkpoints(ckpt_dir) if c[0] <= current_step]
    for _, path in older[:-keep_last]:
        try:
            os.remove(path)
        except OSError as e:
            warn(f"could not remove old checkpoint {path}: {e}")
    _fsync_dir(ckpt_dir)


def load(path):
    """Load and validate one checkpoint; CheckpointError says what is wrong with it."""
    with open_own_file(path) as f:
        try:
            state = torch_load(f)
        except Exception as e:   # truncated zip, bad pickle, I/O error, ...
            first_line = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise CheckpointError(f"unreadable by torch.load ({type(e).__name__}: {first_line})") from e
    if not isinstance(state, dict):
        raise CheckpointError(f"holds a {type(state).__name__}, not a checkpoint dict")
    missing = [k for k in REQUIRED_KEYS if k not in state]
    if missing:
        raise CheckpointError(f"missing required keys: {', '.join(missing)}")
    if state["format"] != FORMAT:
        raise CheckpointError(f"format {state['format']!r}, expected {FORMAT!r}")
    if not isinstance(state["step"], int) or state["step"] < 0:
        raise CheckpointError(f"bad step {state['step']!r}")
    return state


def _quarantine(path):
    """Rename a bad checkpoint to <name>.corrupt: kept for inspection, never loaded again."""
    try:
        os.replace(path, path + ".corrupt")
        warn(f"renamed {path} to {os.path.basename(path)}.corrupt")
    except OSError as e:
        warn(f"could not rename {path} aside: {e}")


def find_latest_valid(ckpt_dir, quarantine=False):
    """(step, path, state) of the newest valid checkpoint in ckpt_dir, or None.

    Invalid ones are skipped with a warning naming the file; older ones are
    tried next. With quarantine=True the invalid ones are renamed *.corrupt.
    """
    for step, path in reversed(list_checkpoints(ckpt_dir)):
        try:
            state = load(path)
            if state["step"] != step:
                raise CheckpointError(f"it records step {state['step']}, not {step}")
        except CheckpointError as e:
            warn(f"skipping checkpoint {path}: {e}; falling back to the previous one")
            if quarantine and not isinstance(e, CheckpointUntrusted):
                _quarantine(path)
            continue
        return step, path, state
    return None
