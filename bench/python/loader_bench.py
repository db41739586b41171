#!/usr/bin/python3
"""bridgetune.DataLoader iterated from Python vs `bridgetune bench-loader` (the same C++ loader, no Python) vs the
PyTorch DataLoader + PIL peer (../shared/peers/torch_loader_bench.py, --peer_variant pil or pil-draft, the better
of its two collates), and optionally the decode limit (tj_limit: 1-thread DCT-scaled decode only, times the
worker count), interleaved in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/loader_bench.py --data DATA [--repeats 3] [--baseline OLD]
        [--peer_variant pil-draft] [--decode_limit /tmp/tj_limit]

Same data, workers, batch and image size for all three; eval transform, no decoded-image cache (every image is
decoded each time, as the peer does). Timing as the peer's: max(1, workers) warm-up batches, then the clock runs for
ceil(samples / batch) batches. Prints each loader's median samples/s over the repeats and the ratios.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import bridgetune

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_loader(a, rep):
    loader = bridgetune.DataLoader(a.data, batch_size=a.batch, num_workers=a.workers, image_size=a.size, seed=rep,
                                   decoded_cache_mb=0, jpeg_dct_scaling=a.dct == "on",
                                   drop_last=True)  # full batches only, as bench-loader counts them
    it, epoch = iter(loader), 0

    def next_batch():
        nonlocal it, epoch
        try:
            return next(it)
        except StopIteration:
            epoch += 1
            loader.set_epoch(epoch)
            it = iter(loader)
            return next(it)

    for _ in range(max(1, a.workers)):
        next_batch()
    n, t0 = 0, time.perf_counter()
    for _ in range(math.ceil(a.samples / a.batch)):
        n += next_batch()["pixel_values"].shape[0]
    return n / (time.perf_counter() - t0)


def cpp_loader(a, rep, binary=None):
    r = subprocess.run([binary or a.bridgetune, "bench-loader", "--data", a.data, "--workers", str(a.workers), "--batch",
                        str(a.batch), "--samples", str(a.samples), "--repeats", "1", "--image_size", str(a.size),
                        "--decoded_cache_mb", "0", "--jpeg_dct_scaling", a.dct, "--seed", str(rep), "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.splitlines()[-1])["samples_per_s"]


def peer_loader(a, rep):
    best = 0.0
    for collate in ("default", "hf"):  # the peer at its best: which collate wins depends on the worker count
        r = subprocess.run([sys.executable, a.peer, "--data", a.data, "--variant", a.peer_variant, "--workers",
                            str(a.workers), "--batch", str(a.batch), "--samples", str(a.samples), "--size", str(a.size),
                            "--seed", str(rep), "--collate", collate], capture_output=True, text=True, check=True)
        best = max(best, json.loads(r.stdout.splitlines()[-1])["samples_per_s"])
    return best


def decode_limit(a, rep):
    """Workers x the 1-thread libjpeg-turbo DCT-scaled decode rate (decode only, RAM-resident): the loader's ceiling."""
    images = os.path.join(a.data, "images")
    r = subprocess.run([a.decode_limit, images if os.path.isdir(images) else a.data, str(a.size), "3.0"],
                       capture_output=True, text=True, check=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")][-1]
    return max(1, a.workers) * json.loads(line)["scaled_images_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="folder with captions.jsonl + JPEGs (bridgetune synth)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=288)
    ap.add_argument("--samples", type=int, default=320)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dct", choices=["on", "off"], default="on",
                    help="JPEG DCT-domain downscaling for both bridgetune loaders (bench-loader's default: on)")
    ap.add_argument("--bridgetune", default=os.path.join(REPO, "build", "bridgetune"))
    ap.add_argument("--peer", default=os.path.join(REPO, "..", "shared", "peers", "torch_loader_bench.py"))
    ap.add_argument("--no_peer", action="store_true")
    ap.add_argument("--peer_variant", default="pil", choices=["pil", "pil-draft", "tvio"],
                    help="pil-draft: Pillow's DCT-domain draft mode, the peer's equivalent of our DCT scaling")
    ap.add_argument("--decode_limit", help="a tj_limit binary (gcc -O2 ../shared/peers/tj_limit.c -lturbojpeg): adds "
                    "the decode-only limit row, workers x its 1-thread scaled decode rate")
    ap.add_argument("--baseline", help="another bridgetune binary (e.g. before a change): its bench-loader runs "
                    "interleaved with the others, so old vs new and each one's peer ratio come from one run")
    a = ap.parse_args()
    runners = {"bridgetune.DataLoader (Python)": python_loader, "bridgetune bench-loader (C++)": cpp_loader}
    if a.baseline:
        runners["bridgetune bench-loader (C++, baseline)"] = lambda a, rep: cpp_loader(a, rep, a.baseline)
    if not a.no_peer:
        runners[f"torch DataLoader + PIL (peer, {a.peer_variant})"] = peer_loader
    if a.decode_limit:
        runners["decode-only limit (tj_limit x workers)"] = decode_limit
    results = {k: [] for k in runners}
    for rep in range(a.repeats):  # interleaved: A B C A B C ...
        for name, fn in runners.items():
            results[name].append(fn(a, rep))
            print(f"# repeat {rep}: {name}: {results[name][-1]:.1f} samples/s", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in results.items()}
    py = med["bridgetune.DataLoader (Python)"]
    print(f"data {a.data}, {a.workers} workers, batch {a.batch}, {a.size} px, {a.samples} samples x {a.repeats} "
          f"repeats, jpeg_dct_scaling {a.dct} (bridgetune), no decoded cache")
    cpp = med["bridgetune bench-loader (C++)"]
    print("| loader | samples/s (median) | runs | Python loader / this | bench-loader / this |\n|---|---|---|---|---|")
    for k, v in results.items():
        print(f"| {k} | {med[k]:.1f} | {', '.join(f'{x:.1f}' for x in v)} | {py / med[k]:.2f} x | {cpp / med[k]:.2f} x |")


if __name__ == "__main__":
    main()
