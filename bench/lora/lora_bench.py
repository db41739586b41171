#!/usr/bin/env python3
"""LoRA against full fine-tuning (issue 44), through the real `bridgetune train`.

  speed:    step throughput (train_samples_per_second) and peak memory of full fine-tuning vs --lora_rank on the
            small and base presets, interleaved, --repeats each, medians.
  transfer: a tiny model pre-trained from scratch on one generated half (the demo's recipe), then fine-tuned on the
            other half fully and with LoRA; held-out matching accuracy of each and the share of parameters trained.

    /usr/bin/python3 bench/lora/lora_bench.py --bin build/bridgetune --work /tmp/lora_bench speed transfer
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def run(cmd, log):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}); see {log}")
    return open(log).read()


def synth(bin_, out, n, images, seed, width):
    if not os.path.exists(os.path.join(out, "captions.jsonl")):
        run([bin_, "synth", "--out", out, "--n", str(n), "--images", str(images), "--seed", str(seed), "--accents",
             "--min_width", str(width), "--max_width", str(width + 64)], out + ".log")


def train(bin_, out, extra):
    log = run([bin_, "train", "--output_dir", out, "--overwrite_output_dir", "--logging_steps", "10",
               "--dataloader_num_workers", "1"] + extra, out + ".log")
    results = json.load(open(os.path.join(out, "train_results.json")))
    m = re.search(r"LoRA: rank \d+ adapters on \d+ Linear layers; (\d+) of (\d+) parameters train", log)
    results["trained_share"] = int(m.group(1)) / int(m.group(2)) if m else 1.0
    return results


def speed(a):
    data = os.path.join(a.work, "speed_data")
    synth(a.bin, data, 256, 64, 5, 320)
    rows = []
    for preset in a.presets.split(","):
        runs = {"full": [], "lora": []}
        for rep in range(a.repeats):  # interleaved: full, lora, full, lora, ...
            for mode in ("full", "lora"):
                extra = ["--model_preset", preset, "--train_file", data, "--max_steps", str(a.steps),
                         "--per_device_train_batch_size", str(a.batch), "--throughput_warmup_steps", "2",
                         "--save_strategy", "no", "--seed", str(rep)]
                if mode == "lora":
                    extra += ["--lora_rank", str(a.rank)]
                runs[mode].append(train(a.bin, os.path.join(a.work, f"speed_{preset}_{mode}_{rep}"), extra))
        row = {"preset": preset}
        for mode, rs in runs.items():
            row[f"{mode}_samples_per_s"] = statistics.median(r["train_samples_per_second"] for r in rs)
            row[f"{mode}_peak_memory_mb"] = statistics.median(r["peak_memory_mb"] for r in rs)
            row[f"{mode}_trained_share"] = rs[0]["trained_share"]
        row["speed_ratio"] = row["lora_samples_per_s"] / row["full_samples_per_s"]
        row["memory_ratio"] = row["lora_peak_memory_mb"] / row["full_peak_memory_mb"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def matching_accuracy(bin_, model, data, out):
    run([bin_, "evaluate", "--model_name_or_path", model, "--validation_file", data, "--task", "matching",
         "--output_dir", out], out + ".log")
    return json.load(open(os.path.join(out, "eval_results.json")))["eval_matching_accuracy"]


def transfer(a):
    w = a.work
    half_a, half_b, held_out = (os.path.join(w, d) for d in ("half_a", "half_b", "held_out"))
    synth(a.bin, half_a, 6000, 2000, 11, 96)
    synth(a.bin, half_b, 6000, 2000, 12, 96)
    synth(a.bin, held_out, 512, 256, 13, 96)
    demo = ["--learning_rate", "5e-4", "--warmup_ratio", "0.05", "--dropout", "0", "--per_device_train_batch_size", "32"]
    pre = os.path.join(w, f"pretrained_{a.pretrain_steps}")
    if not os.path.exists(os.path.join(pre, "train_results.json")):  # reused by later runs of the fine-tuning half
        train(a.bin, pre, ["--model_preset", "tiny", "--train_file", half_a, "--max_steps", str(a.pretrain_steps)] + demo)
    out = {"pretrained": matching_accuracy(a.bin, pre, held_out, pre + "_eval")}
    lora = ["--lora_rank", str(a.rank), "--lora_modules_to_save", a.lora_modules_to_save]
    for mode, lr, extra in (("full", a.full_lr, []), ("lora", a.lora_lr, lora)):
        d = os.path.join(w, f"finetuned_{mode}_r{a.rank}")
        r = train(a.bin, d, ["--model_name_or_path", pre, "--train_file", half_b, "--max_steps", str(a.finetune_steps),
                             "--learning_rate", str(lr), "--warmup_ratio", "0.05", "--dropout", "0",
                             "--per_device_train_batch_size", "32", "--save_strategy", "no"] + extra)
        out[mode] = matching_accuracy(a.bin, d, held_out, d + "_eval")
        out[f"{mode}_trained_share"] = r["trained_share"]
    out["lora_vs_full"] = out["lora"] / out["full"]
    print(json.dumps(out), flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="+", choices=["speed", "transfer"])
    p.add_argument("--bin", default="build/bridgetune")
    p.add_argument("--work", default="/tmp/lora_bench")
    p.add_argument("--presets", default="small,base")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--pretrain_steps", type=int, default=150)
    p.add_argument("--finetune_steps", type=int, default=375)
    p.add_argument("--lora_modules_to_save", default="", help="transfer: the pre-trained heads stay frozen by default")
    p.add_argument("--full_lr", type=float, default=1e-4)
    p.add_argument("--lora_lr", type=float, default=1e-3)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    results = {}
    if "speed" in a.what:
        results["speed"] = speed(a)
    if "transfer" in a.what:
        results["transfer"] = transfer(a)
    json.dump(results, open(os.path.join(a.work, "lora_bench.json"), "w"), indent=2)


if __name__ == "__main__":
    main()
