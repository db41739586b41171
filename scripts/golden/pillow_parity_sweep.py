#!/usr/bin/python3
"""Pillow parity on a folder of real files (issue 54's measure): every file Pillow 9.4 reads
(Image.open(f).convert("RGB")) through bridgetune.preprocess(f, jpeg_dct_scaling=False) against torchvision's
Resize([S], BICUBIC) + CenterCrop(S) + ToTensor + Normalize on Pillow's image.

    PYTHONPATH=build/python /usr/bin/python3 scripts/golden/pillow_parity_sweep.py [--size 224] [--limit N] DIR...

Walks DIR... for files with an image extension (.jpg .jpeg .png .webp .gif .bmp .tif .tiff; bridgetune itself tells
the format from the bytes), identical files once, at most --limit per extension (sorted paths, every k-th). Prints per format: files Pillow
reads, of them read by bridgetune, those within 1 level on >= 99.9 % of values ("same"), the files that differ or are
refused (with bridgetune's reason), the files Pillow refuses that bridgetune reads, and the share of all values
within 1 level. A file bridgetune reads is never a failure of this script; a difference is reported, not raised.
"""
import argparse
import collections
import hashlib
import os
import sys
import warnings

import torch
from PIL import Image
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode

import bridgetune

EXTS = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff")


def files(dirs, limit):
    by_ext, seen = collections.defaultdict(list), set()
    for d in dirs:
        for root, _, names in os.walk(d):
            for n in sorted(names):
                ext = os.path.splitext(n)[1].lower()
                p = os.path.join(root, n)
                if ext not in EXTS or not os.path.isfile(p) or os.path.islink(p):
                    continue
                with open(p, "rb") as f:
                    digest = hashlib.sha1(f.read()).digest()
                if digest not in seen:  # the same file installed in several places counts once
                    seen.add(digest)
                    by_ext[".jpg" if ext == ".jpeg" else ".tif" if ext == ".tiff" else ext].append(p)
    for ext, paths in sorted(by_ext.items()):
        paths.sort()
        step = max(1, len(paths) // limit) if limit else 1
        yield from ((ext, p) for p in paths[::step][: limit or None])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--limit", type=int, default=0, help="files per extension (0: all)")
    a = ap.parse_args()
    std = torch.tensor(bridgetune._native.clip_std()).view(3, 1, 1)
    tv = T.Compose([T.Resize([a.size], interpolation=InterpolationMode.BICUBIC), T.CenterCrop(a.size), T.ToTensor(),
                    T.Normalize(bridgetune._native.clip_mean(), bridgetune._native.clip_std())])
    stats = collections.defaultdict(collections.Counter)
    notes = []
    warnings.simplefilter("ignore")  # Pillow's DecompressionBombWarning, palette transparency notes
    for ext, path in files(a.dirs, a.limit):
        s = stats[ext]
        try:
            with Image.open(path) as im:
                want = tv(im.convert("RGB"))
        except Exception as e:  # what Pillow refuses: is it read by bridgetune?
            s["pillow_refuses"] += 1
            try:
                bridgetune.preprocess(path, image_size=a.size, jpeg_dct_scaling=False)
                s["pillow_refuses_bt_reads"] += 1
                notes.append(f"Pillow refuses, bridgetune reads: {path} (Pillow: {type(e).__name__}: {e})")
            except bridgetune.Error:
                pass
            continue
        s["pillow_reads"] += 1
        try:
            got = bridgetune.preprocess(path, image_size=a.size, jpeg_dct_scaling=False)
        except bridgetune.Error as e:
            s["refused"] += 1
            notes.append(f"refused: {path}: {str(e).splitlines()[0]}")
            continue
        d = ((got - want).abs() * std * 255).numpy()
        within = int((d <= 1.0 + 1e-3).sum())
        s["values"] += d.size
        s["within1"] += within
        if within >= 0.999 * d.size:
            s["same"] += 1
        else:
            s["differ"] += 1
            notes.append(f"differs: {path}: {within / d.size:.4f} of values within 1 level, max {d.max():.1f}")
    print(f"| format | Pillow reads | bridgetune reads | within 1 level (>= 99.9 % of values) | differ | refused "
          f"| Pillow refuses (bridgetune reads) | values within 1 level |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    total = collections.Counter()
    for ext, s in sorted(stats.items()):
        total.update(s)
        share = s["within1"] / s["values"] if s["values"] else float("nan")
        print(f"| {ext[1:]} | {s['pillow_reads']} | {s['pillow_reads'] - s['refused']} | {s['same']} | {s['differ']} "
              f"| {s['refused']} | {s['pillow_refuses']} ({s['pillow_refuses_bt_reads']}) | {100 * share:.3f} % |")
    t = total
    print(f"| all | {t['pillow_reads']} | {t['pillow_reads'] - t['refused']} | {t['same']} | {t['differ']} "
          f"| {t['refused']} | {t['pillow_refuses']} ({t['pillow_refuses_bt_reads']}) "
          f"| {100 * t['within1'] / max(1, t['values']):.3f} % |")
    for n in notes:
        print(n, file=sys.stderr)


if __name__ == "__main__":
    main()
