#!/usr/bin/env python3
"""GPU benchmarks of `benchmark gemm` and `benchmark comm`, for a lent GPU
machine (no GPU here). In one run:

  1. bf16 8192x8192x8192 GEMM: ours (cuBLASLt through primus-cli, events,
     rotating buffers) against torch.matmul on the same GPU (CUDA events,
     the same shape, warm-up, then timed products), alternating ours / torch
     for --rounds rounds; target: ours >= 98% of torch (about 790 TFLOPS on
     an H100/H200). The same with --tune.
  2. The other dtypes at 4096^3 (fp16, fp32, tf32, fp8 with --trans-a) and a
     --sweep with --plot: every result checked.
  3. all-reduce on one GPU, 8 B to 256 MiB (NCCL through primus-cli, -c 1): sane (no wrong
     element, exit 0), then every collective; with several GPUs, all of them.

usage: python3 bench/gpu_bench.py --primus PATH/primus-cli [--out DIR] [--rounds 3]
The CUDA libraries are opened at run time: when libcudart / libcublasLt /
libnccl are not on the loader's path, the directories of torch's pip
packages (nvidia.cuda_runtime, nvidia.cublas, nvidia.nccl) are added to
LD_LIBRARY_PATH for our runs, and printed.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time


def library_path():
    """LD_LIBRARY_PATH with the nvidia pip packages' lib directories, when present."""
    dirs = []
    try:
        import nvidia  # noqa: F401  (namespace package of the CUDA wheels)
        for root in nvidia.__path__:
            dirs += sorted(glob.glob(os.path.join(root, "*", "lib")))
    except ImportError:
        pass
    current = os.environ.get("LD_LIBRARY_PATH", "")
    return ":".join(dirs + ([current] if current else []))


def run(argv, env, timeout=600, check=True):
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    print(f"$ {' '.join(argv)}  ({seconds:.1f} s, exit {result.returncode})", flush=True)
    if check and result.returncode != 0:
        print(result.stdout[-4000:], result.stderr[-4000:], sep="\n")
        raise SystemExit(f"failed: {' '.join(argv)}")
    return result


def torch_matmul_tflops(size, iters, warmup):
    """torch.matmul bf16 size^3, CUDA events, in a child process (its memory goes with it)."""
    code = f"""
import torch, json
a = torch.randn({size}, {size}, device="cuda", dtype=torch.bfloat16)
b = torch.randn({size}, {size}, device="cuda", dtype=torch.bfloat16)
for _ in range({warmup}): c = torch.matmul(a, b)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.synchronize(); start.record()
for _ in range({iters}): c = torch.matmul(a, b)
end.record(); torch.cuda.synchronize()
ms = start.elapsed_time(end) / {iters}
print(json.dumps({{"ms": ms, "tflops": 2 * {size}**3 / (ms * 1e-3) / 1e12, "torch": torch.__version__,
                   "device": torch.cuda.get_device_name()}}))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        return None, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), ""


def ours_gemm(primus, env, extra):
    result = run([primus, "benchmark", "gemm", "--device", "gpu", "--json", *extra], env)
    return json.loads(result.stdout)["results"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", required=True)
    parser.add_argument("--out", default="gpu-bench-out")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    primus = os.path.abspath(args.primus)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = library_path()
    env["NO_COLOR"] = "1"
    print(f"LD_LIBRARY_PATH={env['LD_LIBRARY_PATH']}")
    summary = []

    # 1. bf16 GEMM against torch.matmul, alternating.
    ours, torch_rates, tuned = [], [], []
    torch_info, torch_error = None, ""
    shape = ["-M", str(args.size), "--dtype", "bf16", "--iters", str(args.iters), "--warmup", str(args.warmup)]
    for _ in range(args.rounds):
        r = ours_gemm(primus, env, shape)[0]
        ours.append(r["tflops"])
        print(f"  ours: {r['tflops']:.1f} TFLOPS ({r['percent_of_peak']:.1f}% of peak), {r['mean_ms']:.3f} ms, "
              f"{r['rotation_sets']} sets, check {r['check']['mode']} {'ok' if r['check']['passed'] else 'FAILED'}, "
              f"{r['algorithm']}, {r['library']} on {r['device']}")
        info, torch_error = torch_matmul_tflops(args.size, args.iters, args.warmup)
        if info:
            torch_info = info
            torch_rates.append(info["tflops"])
            print(f"  torch.matmul: {info['tflops']:.1f} TFLOPS, {info['ms']:.3f} ms (torch {info['torch']})")
    r = ours_gemm(primus, env, shape + ["--tune"])[0]
    tuned.append(r["tflops"])
    print(f"  ours --tune: {r['tflops']:.1f} TFLOPS, {r['algorithm']}, candidates {r['candidates']}")
    ours_median = statistics.median(ours)
    if torch_rates:
        ratio = ours_median / statistics.median(torch_rates)
        summary.append(f"RESULT gemm_bf16_{args.size}: ours {ours_median:.1f} TFLOPS, torch.matmul "
                       f"{statistics.median(torch_rates):.1f}, ratio {ratio:.3f} (target >= 0.98: "
                       f"{'met' if ratio >= 0.98 else 'MISSED'}); --tune {tuned[0]:.1f}")
    else:
        summary.append(f"RESULT gemm_bf16_{args.size}: ours {ours_median:.1f} TFLOPS; torch.matmul unavailable: {torch_error}")

    # 2. Other dtypes and a sweep, each checked.
    for dtype, extra in (("fp16", []), ("fp32", []), ("tf32", []), ("fp8", ["--trans-a"])):
        r = ours_gemm(primus, env, ["-M", "4096", "--dtype", dtype, *extra])[0]
        summary.append(f"RESULT gemm_{dtype}_4096: {r['tflops']:.1f} TFLOPS ({r['percent_of_peak']:.1f}% of peak), "
                       f"check {'ok' if r['check']['passed'] else 'FAILED'} ({r['check']['mode']}, max error "
                       f"{r['check']['max_error']:.2g}), used {r['dtype_used']} {r['note']}")
    plot = os.path.join(args.out, "gemm_sweep.svg")
    sweep = run([primus, "benchmark", "gemm", "--device", "gpu", "--sweep", "-M", "16384", "--plot", plot], env)
    (open(os.path.join(args.out, "gemm_sweep.txt"), "w")).write(sweep.stdout)
    print(sweep.stdout)

    # 3. Collectives on one GPU, then on all of them.
    one = run([primus, "direct", "--nproc-per-node", "1", "--", "benchmark", "comm", "--device", "gpu",
               "-b", "8", "-e", "256M", "-f", "4", "-c", "1"], env, check=False)
    open(os.path.join(args.out, "allreduce_1gpu.txt"), "w").write(one.stdout + one.stderr)
    print(one.stdout)
    wrong_ok = "# Out of bounds values : 0 OK" in one.stdout
    summary.append(f"RESULT allreduce_1gpu: exit {one.returncode}, {'no wrong element' if wrong_ok else 'WRONG ELEMENTS'}")
    every = run([primus, "direct", "--", "benchmark", "comm", "--device", "gpu", "--op", "all", "-b", "1K", "-e", "256M",
                 "-f", "16", "-c", "1", "--plot", os.path.join(args.out, "busbw.svg")], env, check=False)
    open(os.path.join(args.out, "comm_all.txt"), "w").write(every.stdout + every.stderr)
    print(every.stdout)
    summary.append(f"RESULT comm_all_gpus: exit {every.returncode}, "
                   f"{every.stdout.count('# Out of bounds values : 0 OK')} of 6 collectives without a wrong element")
    print("\n".join(summary))
    open(os.path.join(args.out, "summary.txt"), "w").write("\n".join(summary) + "\n")


if __name__ == "__main__":
    main()
