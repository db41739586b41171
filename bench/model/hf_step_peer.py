#!/usr/bin/python3
"""The HF transformers peer of bench_model (bench/model/bench_model.cpp): forward + backward of
BridgeTowerForContrastiveLearning (train mode, random init, random inputs, return_loss) on the CPU, the same shapes:
a config.json written by `bridgetune info --model_preset P --write_config F`, batch B, text length L (first token
<s>, mask all ones), the preset's image size. One warm-up step, then timed steps; zero_grad before each step;
--bf16: the forward under torch.autocast("cpu", torch.bfloat16), backward outside it (as bench_model and HF
Trainer do). Run by bench/model/step_hf_bench.py with transformers on PYTHONPATH
(../shared/reference/setup_hf_reference.sh); never by the README's commands or CI.

    python3 hf_step_peer.py CONFIG_JSON [--batch 8] [--text_len 40] [--steps 3] [--threads N] [--bf16] [--count_flops]

Prints one JSON line: s_per_sample (median wall seconds per sample of the timed steps), steps, threads.
--count_flops: instead, one step under torch.profiler(with_flops=True) and the GEMM work of a step per sample
(gemm_gflop_per_sample: mm, addmm, bmm and the patch embedding's convolution, forward and backward, as the
profiler counts them) -- divided by a measured GEMM rate (bench/model/gemm_bench.py) it is the step's floor on a
machine, whoever implements it.
"""
import argparse
import json
import statistics
import time

import torch
from transformers import BridgeTowerConfig, BridgeTowerForContrastiveLearning


def step(model, ids, mask, px, bf16):
    model.zero_grad(set_to_none=False)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        out = model(input_ids=ids, attention_mask=mask, pixel_values=px, return_loss=True)
    out.loss.backward()


# matmul is not counted itself: it runs as mm/bmm, which are.
GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::conv2d"}


def count_flops(model, ids, mask, px, a):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True) as prof:
        step(model, ids, mask, px, a.bf16)
    flops = {}
    for e in prof.key_averages():
        if e.flops and e.key in GEMM_OPS:
            flops[e.key] = flops.get(e.key, 0) + e.flops
    return {"peer": "HF BridgeTowerForContrastiveLearning", "batch": a.batch, "text_len": a.text_len,
            "gemm_gflop_per_sample": sum(flops.values()) / a.batch / 1e9,
            "gflop_by_op": {k: v / a.batch / 1e9 for k, v in sorted(flops.items())}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--text_len", type=int, default=40)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--count_flops", action="store_true")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    cfg = BridgeTowerConfig.from_json_file(a.config)
    model = BridgeTowerForContrastiveLearning(cfg).train()
    size = cfg.vision_config.image_size
    px = torch.randn(a.batch, 3, size, size)
    ids = torch.randint(3, cfg.text_config.vocab_size, (a.batch, a.text_len))
    ids[:, 0] = cfg.text_config.bos_token_id
    mask = torch.ones(a.batch, a.text_len, dtype=torch.long)
    if a.count_flops:
        print(json.dumps(count_flops(model, ids, mask, px, a)))
        return
    times = []
    for i in range(a.steps + 1):
        t0 = time.perf_counter()
        step(model, ids, mask, px, a.bf16)
        if i:
            times.append((time.perf_counter() - t0) / a.batch)
    print(json.dumps({"peer": "HF BridgeTowerForContrastiveLearning", "s_per_sample": statistics.median(times),
                      "steps": a.steps, "batch": a.batch, "text_len": a.text_len, "bf16": a.bf16,
                      "threads": torch.get_num_threads(), "runs": times}))


if __name__ == "__main__":
    main()
