#!/usr/bin/python3
"""`bridgetune encode` vs HF transformers (issue 28's speed goal): images/s embedding a folder of pictures with the
same model, interleaved, medians. The peer is bench/python/hf_encode_peer.py (torch DataLoader + PIL + the image
half of BridgeTowerForContrastiveLearning's forward), run with transformers on --hf_pythonpath (made by
../shared/reference/setup_hf_reference.sh; never part of the README's commands or CI).

    /usr/bin/python3 bench/python/encode_hf_bench.py --hf_pythonpath P [--preset base] [--image_size 288]
        [--images 64] [--batch 16] [--workers 2] [--repeats 3] [--precision fp32,bf16] [--workdir /tmp/bt_encode_bench]

What each side counts: bridgetune's clock covers its loader, the image forward and the captions' text forward
(every row's caption is embedded too: a handicap for bridgetune); the peer's covers its DataLoader and the image
forward. Model loading is outside both. Each precision is compared with itself (bridgetune --bf16 against the peer
under torch.autocast bf16), with the same loader worker count and each side's own default torch thread count unless
--threads is given. The peer runs once per --peer_blas_threads value (OPENBLAS_NUM_THREADS: 1 is the setting
this project uses for Debian's libtorch, where float32 GEMMs then run on one core; 2 lets OpenBLAS use both cores,
what a user tuning the Python side would try); the ratio is taken against the fastest of them. The embeddings are compared at the end (cosine per image:
bridgetune decodes JPEGs with DCT scaling by default, so pixels differ slightly from PIL's).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def sh(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.stdout


def prepare(a):
    data, model = os.path.join(a.workdir, "data"), os.path.join(a.workdir, f"model_{a.preset}_{a.image_size}")
    if not os.path.exists(os.path.join(data, "captions.jsonl")):
        sh([a.bridgetune, "synth", "--out", data, "--n", str(a.images), "--images", str(a.images), "--min_width", "400",
            "--max_width", "800", "--seed", "3"])
    if not os.path.exists(os.path.join(model, "model.safetensors")):  # a randomly initialised model, saved as HF
        sh([a.bridgetune, "train", "--model_preset", a.preset, "--image_size", str(a.image_size), "--train_file", data,
            "--max_steps", "0", "--per_device_train_batch_size", "2", "--output_dir", model, "--overwrite_output_dir"])
    return data, model


def run_bridgetune(a, data, model, rep, precision):
    out = os.path.join(a.workdir, f"index_{precision}_{rep}")
    cmd = [a.bridgetune, "encode", "--model_name_or_path", model, "--data", data, "--output_dir", out,
           "--per_device_eval_batch_size", str(a.batch), "--dataloader_num_workers", str(a.workers)]
    if precision == "bf16":
        cmd.append("--bf16")
    if a.threads:
        cmd += ["--torch_threads", str(a.threads)]
    text = sh(cmd, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    m = re.search(r"encoded (\d+) images and (\d+) texts .* in ([0-9.]+) s: ([0-9.]+) images/s", text)
    if not m:
        sys.exit(f"no throughput line in encode's output:\n{text[-1000:]}")
    return int(m.group(1)) / float(m.group(3)), out  # the printed rate has one decimal only


def run_peer(a, data, model, rep, precision, blas_threads):
    out = os.path.join(a.workdir, f"peer_{precision}_{rep}_blas{blas_threads}.npy")
    cmd = [sys.executable, os.path.join(HERE, "hf_encode_peer.py"), model, data, "--batch", str(a.batch), "--workers",
           str(a.workers), "--out", out] + (["--threads", str(a.threads)] if a.threads else [])
    if precision == "bf16":
        cmd.append("--bf16")
    env = dict(os.environ, PYTHONPATH=a.hf_pythonpath, OPENBLAS_NUM_THREADS=str(blas_threads))
    return json.loads(sh(cmd, env=env).splitlines()[-1])["images_per_s"], out


def agreement(index_dir, peer_npy, data):
    """Cosine between the two sides' embedding of each image (matched by key)."""
    ours = np.load(os.path.join(index_dir, "image_embeds.npy"))
    with open(os.path.join(index_dir, "images.jsonl")) as f:
        keys = [json.loads(line)["image"] for line in f]
    theirs = np.load(peer_npy)
    with open(os.path.splitext(peer_npy)[0] + ".keys.json") as f:
        peer_keys = json.load(f)
    at = {os.path.normpath(os.path.join(data, k)): i for i, k in enumerate(peer_keys)}  # ours are resolved paths
    keys = [os.path.normpath(k if os.path.isabs(k) else os.path.join(data, k)) for k in keys]
    cos = [float(ours[i] @ theirs[at[k]]) for i, k in enumerate(keys) if k in at]
    return min(cos), statistics.median(cos), len(cos)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bridgetune", default=os.path.join(REPO, "build", "bridgetune"))
    ap.add_argument("--hf_pythonpath", required=True, help="PYTHONPATH with transformers (setup_hf_reference.sh)")
    ap.add_argument("--preset", default="base")
    ap.add_argument("--image_size", type=int, default=288)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch threads on both sides (0: each side's default)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--precision", default="fp32,bf16", help="comma-separated: fp32, bf16")
    ap.add_argument("--workdir", default="/tmp/bt_encode_bench")
    ap.add_argument("--peer_blas_threads", default="1,2", help="comma-separated OPENBLAS_NUM_THREADS values for the peer")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    data, model = prepare(a)
    precisions = a.precision.split(",")
    blas = [int(t) for t in a.peer_blas_threads.split(",")]
    runs = {p: ([], {t: [] for t in blas}) for p in precisions}
    last = {}
    for rep in range(a.repeats):  # interleaved: machine noise hits both sides and both precisions alike
        for p in precisions:
            v, index_dir = run_bridgetune(a, data, model, rep, p)
            runs[p][0].append(v)
            peers = []
            for t in blas:
                w, peer_npy = run_peer(a, data, model, rep, p, t)
                runs[p][1][t].append(w)
                peers.append(f"HF peer (OpenBLAS {t} thread{'s' if t > 1 else ''}) {w:.2f}")
            last[p] = (index_dir, peer_npy)
            print(f"[{rep + 1}/{a.repeats}] {p}: bridgetune encode {v:.2f} images/s, " + ", ".join(peers), flush=True)
    for p in precisions:
        ours, peer_runs = runs[p]
        peer_medians = {t: statistics.median(r) for t, r in peer_runs.items()}
        best = max(peer_medians, key=peer_medians.get)
        peer = peer_runs[best]
        lo, med, n = agreement(last[p][0], last[p][1], data)
        print(json.dumps({"precision": p, "preset": a.preset, "image_size": a.image_size, "images": a.images,
                          "batch": a.batch, "workers": a.workers, "threads": a.threads,
                          "bridgetune_images_per_s": statistics.median(ours), "hf_images_per_s": statistics.median(peer),
                          "ratio": statistics.median(ours) / statistics.median(peer), "hf_best_openblas_threads": best,
                          "hf_images_per_s_by_openblas_threads": peer_medians, "runs_bridgetune": ours,
                          "runs_hf": {t: r for t, r in peer_runs.items()}, "embedding_cosine_min": lo, "embedding_cosine_median": med,
                          "compared_images": n}))


if __name__ == "__main__":
    main()
