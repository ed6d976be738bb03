#!/usr/bin/python3
"""How long `primus-cli analyze logs` takes on large logs: 8 rank logs of
ordinary training lines (stamped as the agent writes them) with a failure
near the end, at 100k and 1M lines in all. Prints seconds and lines/s, and
checks the diagnosis (first failure: rank 5's out-of-memory). Anchor, same
run: `grep -r -c -P` with the signature patterns as one alternation over the same files (matching
only: no grouping, no ordering, no report).

usage: /usr/bin/python3 bench/analyze_logs.py [LINES ...]
"""
import json
import os
import re
import subprocess
import sys
import time

import benchlib as b

sizes = [int(x) for x in sys.argv[1:]] or [100_000, 1_000_000]
patterns = [m.group(1).replace("''", "'") for m in
            re.finditer(r"^    pattern: '(.*)'$", open(os.path.join(b.ROOT, "data", "signatures.yaml")).read(), re.M)]
for total in sizes:
    work = b.workdir("analyze")
    attempt = os.path.join(work, "logs", "attempt_0")
    os.makedirs(attempt, exist_ok=True)
    per_rank = total // 8
    for rank in range(8):
        with open(os.path.join(attempt, "node1.rank%d.log" % rank), "w") as log:
            for step in range(per_rank):
                second = step // 100
                log.write("2026-11-24T%02d:%02d:%02d.%06d O step %d/%d loss %.4f lr 2.00e-04 tok/s %d\n"
                          % (10 + second // 3600, second // 60 % 60, second % 60, step % 100 * 10000,
                             step, per_rank, 5.0 / (1 + step), 30000 + step % 500))
            if rank == 5:
                log.write("2026-11-24T23:00:00.000000 E torch.cuda.OutOfMemoryError: CUDA out of memory. "
                          "Tried to allocate 2.00 GiB\n")
            else:
                log.write("2026-11-24T23:00:00.500000 E RuntimeError: [pair.cc:598] Connection closed by peer\n")
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        result = subprocess.run([b.PRIMUS, "analyze", "logs", work, "--json"], capture_output=True, text=True)
        runs.append(time.perf_counter() - start)
        assert result.returncode == 0, result.stderr
    pattern_file = os.path.join(work, "patterns.txt")
    with open(pattern_file, "w") as out:
        out.write("|".join("(?:%s)" % p for p in patterns) + "\n")  # -P takes one pattern
    grep_runs = []
    for _ in range(3):
        start = time.perf_counter()
        found = subprocess.run(["grep", "-r", "-c", "-P", "-f", pattern_file, os.path.join(work, "logs")],
                               capture_output=True, text=True)
        assert found.returncode == 0, found.stderr
        grep_runs.append(time.perf_counter() - start)
    report = json.loads(result.stdout)
    first = report["first_failures"][0]
    assert first["signature"] == "gpu-out-of-memory" and first["where"]["rank"] == 5, first
    best = min(runs)
    print("RESULT analyze_logs: %d lines in 8 files: %.3f s (best of 3; median %.3f s), %.2f M lines/s; "
          "first failure rank 5 gpu-out-of-memory: correct" % (report["lines"], best, sorted(runs)[1],
                                                            report["lines"] / best / 1e6))
    print("  anchor grep -P, the patterns as one alternation (%d patterns): %.3f s (best of 3): ratio ours/grep %.2f"
          % (len(patterns), min(grep_runs), best / min(grep_runs)))
