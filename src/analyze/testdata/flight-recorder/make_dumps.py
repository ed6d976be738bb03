#!/usr/bin/env python3
"""Writes the flight recorder dumps the analyze tests read.

The dumps follow the format PyTorch documents for its NCCL flight recorder
(the tutorial "Flight Recorder for Debugging Stuck Jobs": version, pg_config,
pg_status, entries with pg_id, process_group, collective_seq_id, p2p_seq_id,
profiling_name, input_sizes, state, frames, ...). PyTorch's C++ writes them
with its TorchScript pickler, which wraps dicts in
torch.jit._pickle.restore_type_tag; the rank files of the first scenario are
written that way, the others as pickle.dumps and JSON would.

Scenarios, 4 ranks in the default group:
  behind/    ranks 0, 1, 3 wait in all_reduce #42; rank 2 issued only up to #41
  mismatch/  ranks 0, 2, 3 wait in all_reduce #42 [[1024]]; rank 1 in broadcast #42 [[8]]
  stuck/     every rank waits in all_reduce #42: none is behind
Run: python3 make_dumps.py  (rewrites the files beside it)
"""
import json
import os
import pickle
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def restore_type_tag(value, type_str):  # TorchScript's wrapper, as the pickle names it
    return value


# Stand-in modules so that pickle names the function as TorchScript's pickler does.
for name in ("torch", "torch.jit", "torch.jit._pickle"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["torch.jit._pickle"].restore_type_tag = restore_type_tag
restore_type_tag.__module__ = "torch.jit._pickle"


class Tagged(dict):
    def __reduce__(self):
        return (restore_type_tag, (dict(self), "Dict[str, Any]"))


def entry(record_id, seq, op, state, sizes, frames):
    return {
        "frames": frames,
        "record_id": record_id,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": "nccl:" + op,
        "time_created_ns": 1724779239936775119 + seq,
        "input_sizes": sizes,
        "input_dtypes": ["Float"],
        "output_sizes": sizes,
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": 1724779239975811724 if state == "completed" else None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": False,
    }


FRAMES = [
    {"name": "all_reduce", "filename": "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "line": 2696},
    {"name": "wrapper", "filename": "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", "line": 83},
    {"name": "train_step", "filename": "/work/train.py", "line": 44},
    {"name": "<module>", "filename": "/work/train.py", "line": 60},
]


def dump(entries, last_enqueued, last_completed):
    return {
        "version": "2.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
        "pg_status": {"0": {"last_enqueued_collective": last_enqueued, "last_started_collective": -1,
                            "last_completed_collective": last_completed}},
        "entries": entries,
    }


def history(upto):  # completed collectives 40..upto
    return [entry(seq, seq, "all_reduce", "completed", [[1024]], FRAMES) for seq in range(40, upto + 1)]


def write(scenario, rank, content, form):
    os.makedirs(os.path.join(HERE, scenario), exist_ok=True)
    path = os.path.join(HERE, scenario, "nccl_trace_rank_%d" % rank)
    with open(path, "wb") as out:
        if form == "torchscript":
            out.write(pickle.dumps(Tagged(content), protocol=2))
        elif form == "json":
            out.write(json.dumps(content, indent=1).encode())
        else:
            out.write(pickle.dumps(content, protocol=4))


def main():
    for rank in range(4):
        if rank == 2:
            write("behind", rank, dump(history(41), 41, 41), "torchscript")
        else:
            pending = entry(42, 42, "all_reduce", "scheduled", [[1024]], FRAMES)
            write("behind", rank, dump(history(41) + [pending], 42, 41), "torchscript")
    for rank in range(4):
        op, sizes = ("broadcast", [[8]]) if rank == 1 else ("all_reduce", [[1024]])
        pending = entry(42, 42, op, "started", sizes, FRAMES)
        write("mismatch", rank, dump(history(41) + [pending], 42, 41), "pickle")
    for rank in range(4):
        pending = entry(42, 42, "all_reduce", "started", [[1024]], FRAMES)
        write("stuck", rank, dump(history(41) + [pending], 42, 41), "json" if rank % 2 else "pickle")


if __name__ == "__main__":
    main()
