#!/usr/bin/env python3
"""The table of bench/gpu/step_check.sh: one row per configuration, the median over its repeats.

    python3 bench/gpu/step_summary.py RESULTS_DIR OUT_DIR BATCH

Reads RESULTS_DIR/bench_<i>/bench_results.json (bridgetune bench rows), peer_<i>.jsonl (the HF peer), and
train_<name>/train_results.json + metrics.jsonl (memory modes, bf16 vs fp16); writes OUT_DIR/step_check.json and
OUT_DIR/step_check.md and prints the markdown. Columns: samples/s, step ms, TFLOP/s, MFU, peak GB, attention
backends (the run's op_paths). The peer's TFLOP/s uses bridgetune's model FLOPs per sample (the same model). The
precision rows add the largest per-step loss difference of fp16 from bf16. Missing files are skipped, never fatal.
"""
import glob
import json
import os
import statistics
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def attention_of(paths):
    i = (paths or "").find("attention ")
    return paths[i + len("attention "):] if i >= 0 else ""


def add(rows, key, **v):
    rows.setdefault(key, []).append(v)


def collect(res, batch):
    rows, flops = {}, 0.0
    for path in sorted(glob.glob(os.path.join(res, "bench_*", "bench_results.json"))):
        tag = os.path.basename(os.path.dirname(path))[len("bench_"):]
        tag = "" if tag.isdigit() else f" ({tag.replace('_', ' ')})"  # bench_<repeat>, or a variant's own rows
        for r in (load_json(path) or {}).get("rows", []):
            flops = flops or r.get("model_flops_per_sample") or 0.0
            add(rows, "bridgetune " + r["label"] + tag, sps=r.get("samples_per_s"), tflops=r.get("tflops_per_s"),
                mfu=r.get("mfu"), peak=r.get("peak_memory_bytes"), attention=attention_of(r.get("paths")))
    for path in sorted(glob.glob(os.path.join(res, "peer_*.jsonl"))):
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                label = "HF peer " + str(r.get("loader")) + ("" if r.get("workers") is None else f" {r['workers']}")
                add(rows, label, sps=r.get("samples_per_s"), attention="HF (eager)", error=r.get("error"))
    for d in sorted(glob.glob(os.path.join(res, "train_*"))):
        r = load_json(os.path.join(d, "train_results.json"))
        if not r:
            continue
        add(rows, os.path.basename(d)[len("train_"):], sps=r.get("train_samples_per_second"),
            tflops=r.get("tflops_per_s"), mfu=r.get("mfu"), peak=(r.get("peak_memory_mb") or 0) * 2**20,
            attention=attention_of(r.get("op_paths")))
    return rows, flops


def losses(res, name):
    out = []
    try:
        with open(os.path.join(res, "train_" + name, "metrics.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if "loss" in r and "step" in r:
                    out.append(r["loss"])
    except (OSError, ValueError):
        pass
    return out


def median(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def table(rows, flops, batch):
    out = []
    for label, runs in rows.items():
        sps = median([r.get("sps") for r in runs])
        tflops = median([r.get("tflops") for r in runs])
        if tflops is None and sps and flops:
            tflops = sps * flops / 1e12
        out.append({"row": label, "repeats": len(runs), "samples_per_s": sps,
                    "step_ms": 1000.0 * batch / sps if sps else None, "tflops_per_s": tflops,
                    "mfu": median([r.get("mfu") for r in runs]),
                    "peak_gb": (median([r.get("peak") for r in runs]) or 0) / 2**30 or None,
                    "attention": next((r["attention"] for r in runs if r.get("attention")), ""),
                    "errors": [r["error"] for r in runs if r.get("error")]})
    return out


def fmt(v, f):
    return "-" if v is None else format(v, f)


def main():
    res, out_dir, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rows, flops = collect(res, batch)
    t = table(rows, flops, batch)
    bf16, fp16 = losses(res, "prec_bf16"), losses(res, "prec_fp16")
    n = min(len(bf16), len(fp16))
    precision = {"steps": n, "bf16_losses": bf16, "fp16_losses": fp16,
                 "max_abs_loss_diff": max((abs(a - b) for a, b in zip(bf16, fp16)), default=None),
                 "final_bf16": bf16[-1] if bf16 else None, "final_fp16": fp16[-1] if fp16 else None}
    md = ["| row | repeats | samples/s | step ms | TFLOP/s | MFU | peak GB | attention |",
          "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in t:
        md.append(f"| {r['row']} | {r['repeats']} | {fmt(r['samples_per_s'], '.1f')} | {fmt(r['step_ms'], '.0f')} | "
                  f"{fmt(r['tflops_per_s'], '.3g')} | {fmt(r['mfu'], '.3f')} | {fmt(r['peak_gb'], '.1f')} | "
                  f"{r['attention']}{' (errors: ' + str(len(r['errors'])) + ')' if r['errors'] else ''} |")
    md.append(f"\nfp16 (loss scaling) vs bf16, {n} steps, --dropout 0: largest per-step loss difference "
              f"{fmt(precision['max_abs_loss_diff'], '.4f')}, final {fmt(precision['final_fp16'], '.4f')} vs "
              f"{fmt(precision['final_bf16'], '.4f')}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "step_check.json"), "w") as f:
        json.dump({"rows": t, "precision": precision, "model_flops_per_sample": flops, "batch": batch}, f, indent=1)
    with open(os.path.join(out_dir, "step_check.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
