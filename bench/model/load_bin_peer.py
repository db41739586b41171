#!/usr/bin/python3
"""Python's side of the pytorch_model.bin load bench: torch.load + copying into an equally sized set of torch
tensors (what load_state_dict does; transformers is not installed, so the model is a dict of tensors of the same
names and shapes, filled with zeros so their pages are resident, like a built model's).

usage: load_bin_peer.py write NAMES OUT_DIR   random weights (the shapes in NAMES) -> OUT_DIR/pytorch_model.bin
       load_bin_peer.py load NAMES OUT_DIR    time the load; prints one line like bench_load_bin
"""
import sys
import time

import torch


def shapes(path):
    out = {}
    for line in open(path):
        f = line.split()
        out[f[0]] = [int(x) for x in f[1:]]
    return out


def status_mb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    mode, names, out = sys.argv[1:4]
    torch.set_num_threads(1)
    sh = shapes(names)
    if mode == "write":
        g = torch.Generator().manual_seed(0)
        sd = {k: torch.randn(v, generator=g) * 0.02 for k, v in sh.items()}
        torch.save(sd, out + "/pytorch_model.bin")
        return
    params = {k: torch.zeros(v) for k, v in sh.items()}
    before = status_mb("VmRSS:")
    t0 = time.perf_counter()
    sd = torch.load(out + "/pytorch_model.bin", map_location="cpu")
    with torch.no_grad():
        for k, p in params.items():
            p.copy_(sd[k])
    del sd
    s = time.perf_counter() - t0
    peak = status_mb("VmHWM:")
    print("python torch.load + copy: %.2f s, rss before %.0f MB, peak %.0f MB, extra %.0f MB" % (s, before, peak, peak - before))


if __name__ == "__main__":
    main()
