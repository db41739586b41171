#!/usr/bin/python3
"""bridgetune's training step vs HF transformers' on the CPU (issue 30's step goal): forward + backward of
BridgeTowerForContrastiveLearning, same shapes, same libtorch, interleaved, medians.

    /usr/bin/python3 bench/model/step_hf_bench.py --hf_pythonpath P [--presets small,base] [--precision fp32,bf16]
        [--batch 8] [--text_len 40] [--steps 3] [--repeats 3] [--threads 2] [--ours now,no_reuse,torch_gemm]
        [--peer_blas_threads 1,2] [--peer_malloc default,reuse]

Per repetition, preset and precision: build/bench/bench_model once per --ours variant -- `now` (bridgetune as it
runs: Linear layers on oneDNN in float32 and under bf16 autocast, freed memory kept for reuse), `no_reuse`
(BRIDGETUNE_KEEP_FREED_MEMORY=0: glibc's allocator and c10's as they come), `torch_gemm` (BRIDGETUNE_CPU_GEMM=torch:
libtorch's own GEMMs -- float32 on OpenBLAS pinned to one thread, autocast's bf16 linear) -- then bench/model/hf_step_peer.py once per --peer_blas_threads value
(OPENBLAS_NUM_THREADS: 1 is this project's Debian setting, 2 lets the peer's float32 GEMMs use both cores) and
--peer_malloc setting (`reuse`: the same allocator setting given to the peer through GLIBC_TUNABLES, what a user
tuning the Python side could do). The ratio is against the fastest peer configuration. Seconds per sample are each
run's median over --steps timed steps after one warm-up. The optimizer step is outside both sides' clocks.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.stdout


# GLIBC_TUNABLES equivalent of common/process_memory.cpp's keep_freed_memory_for_reuse (for the Python peer).
REUSE_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647"


def ours(a, preset, bf16, variant):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", BRIDGETUNE_CPU_GEMM="torch" if variant == "torch_gemm" else "onednn",
               BRIDGETUNE_KEEP_FREED_MEMORY="0" if variant == "no_reuse" else "1")
    out = sh([a.bench_model, preset, str(a.batch), str(a.steps), str(a.text_len), str(a.threads), str(int(bf16))], env)
    m = re.search(r"median ([0-9.]+) s/sample wall", out)
    if not m:
        sys.exit(f"no median line in bench_model's output:\n{out[-1000:]}")
    return float(m.group(1))


def peer(a, config, bf16, blas, malloc):
    env = dict(os.environ, PYTHONPATH=a.hf_pythonpath, OPENBLAS_NUM_THREADS=str(blas))
    if malloc == "reuse":
        env["GLIBC_TUNABLES"] = REUSE_TUNABLES
    cmd = [sys.executable, os.path.join(REPO, "bench", "model", "hf_step_peer.py"), config, "--batch", str(a.batch),
           "--text_len", str(a.text_len), "--steps", str(a.steps), "--threads", str(a.threads)] + (["--bf16"] if bf16 else [])
    return json.loads(sh(cmd, env).splitlines()[-1])["s_per_sample"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hf_pythonpath", required=True)
    ap.add_argument("--bridgetune", default=os.path.join(REPO, "build", "bridgetune"))
    ap.add_argument("--bench_model", default=os.path.join(REPO, "build", "bench", "bench_model"))
    ap.add_argument("--presets", default="small,base")
    ap.add_argument("--precision", default="fp32,bf16")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--text_len", type=int, default=40)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="torch threads on both sides")
    ap.add_argument("--ours", default="now,no_reuse,torch_gemm")
    ap.add_argument("--peer_blas_threads", default="1,2")
    ap.add_argument("--peer_malloc", default="default,reuse")
    ap.add_argument("--workdir", default="/tmp/bt_step_bench")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    blas = [int(t) for t in a.peer_blas_threads.split(",")]
    peers = [(t, m) for t in blas for m in a.peer_malloc.split(",")]
    variants = a.ours.split(",")
    configs = {}
    for p in a.presets.split(","):
        configs[p] = os.path.join(a.workdir, f"{p}.config.json")
        sh([a.bridgetune, "info", "--model_preset", p, "--write_config", configs[p]], dict(os.environ))
    cells = [(p, prec) for p in configs for prec in a.precision.split(",")]
    runs = {c: {**{v: [] for v in variants}, **{f"hf_blas{t}_{m}": [] for t, m in peers}} for c in cells}
    for rep in range(a.repeats):  # interleaved: machine noise hits every side alike
        for c in cells:
            p, prec = c
            bf16 = prec == "bf16"
            r = runs[c]
            for v in variants:
                r[v].append(ours(a, p, bf16, v))
            for t, m in peers:
                r[f"hf_blas{t}_{m}"].append(peer(a, configs[p], bf16, t, m))
            print(f"[{rep + 1}/{a.repeats}] {p} {prec}: " +
                  ", ".join(f"{k} {v[-1]:.3f}" for k, v in r.items() if v) + " s/sample", flush=True)
    for c, r in runs.items():
        med = {k: statistics.median(v) for k, v in r.items() if v}
        best_peer = min((k for k in med if k.startswith("hf_")), key=med.get)
        print(json.dumps({"preset": c[0], "precision": c[1], "batch": a.batch, "text_len": a.text_len,
                          "threads": a.threads, "s_per_sample_median": med, "best_peer": best_peer,
                          "speedup_vs_best_peer": med[best_peer] / med[variants[0]],
                          "runs": r}), flush=True)


if __name__ == "__main__":
    main()
