#!/usr/bin/env python3
"""Data for the GPU check (and the fallback when `bridgetune synth` is not built): --images JPEG line drawings
(~740x700: 660-820 x 640-760 px, baseline q90 4:2:0 like `bridgetune synth`) on noisy off-white paper, and
--n captions in captions.jsonl, in the layout `bridgetune synth` writes: images/NNNNNN.jpg and rows
{"image": "images/NNNNNN.jpg", "caption": "..."} (every image used at least once, then at random).
captions.jsonl is written last (atomically), so its presence means the folder is complete. Sizes, strokes and
captions depend only on --seed (not on --jobs); the paper grain comes from Pillow's effect_noise (the C
library's rand(), not seeded here). Needs only Pillow.

  python3 bench/gpu/make_images.py --out DIR --n 1200 --images 300
"""
import argparse
import json
import os
import random
import sys
from multiprocessing import Pool

from PIL import Image, ImageDraw, ImageFilter

WORDS = ("the cat said a man woman dog office boss meeting coffee why cannot we just talk about "
         "this later again tomorrow my lawyer says desert island doctor patient").split()


def photo_like(rng, w, h):
    """Texture everywhere, as a photograph has: colour gradients, soft blobs and per-channel grain (many non-zero
    DCT coefficients per block, so decoding costs what a photo costs, unlike the smooth paper of a drawing)."""
    base = Image.linear_gradient("L").resize((w, h)).rotate(rng.randint(0, 359), expand=False)
    chans = [base.point(lambda v, a=rng.randint(40, 120), b=rng.randint(60, 200): (a + v * b // 255) % 256)
             for _ in range(3)]
    im = Image.merge("RGB", chans)
    d = ImageDraw.Draw(im)
    for _ in range(rng.randint(30, 80)):
        x, y, r = rng.randint(0, w), rng.randint(0, h), rng.randint(10, 120)
        d.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randint(0, 255) for _ in range(3)))
    im = im.filter(ImageFilter.GaussianBlur(3))
    grain = Image.merge("RGB", [Image.effect_noise((w, h), 40) for _ in range(3)])
    return Image.blend(im, grain, 0.35)


def render(job):
    """One image: its own RNG from (seed, index), so the output does not depend on the process that draws it."""
    out, seed, i, style = job
    rng = random.Random(seed * 1_000_003 + i)
    w, h = rng.randint(660, 820), rng.randint(640, 760)
    if style == "photo":
        path = os.path.join(out, "images", "%06d.jpg" % i)
        photo_like(rng, w, h).save(path + ".tmp", format="JPEG", quality=90, subsampling=2)
        os.replace(path + ".tmp", path)
        return i
    im = Image.effect_noise((w, h), 12).convert("RGB").point(lambda v: 200 + v // 5)
    d = ImageDraw.Draw(im)
    for _ in range(rng.randint(20, 60)):
        pts = [(rng.randint(0, w), rng.randint(0, h)) for _ in range(rng.randint(2, 6))]
        d.line(pts, fill=(rng.randint(0, 80),) * 3, width=rng.randint(1, 4))
    path = os.path.join(out, "images", "%06d.jpg" % i)
    im.filter(ImageFilter.SMOOTH).save(path + ".tmp", format="JPEG", quality=90, subsampling=2)
    os.replace(path + ".tmp", path)
    return i


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=1000, help="caption rows")
    ap.add_argument("--images", type=int, default=250, help="distinct JPEGs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=0, help="processes (default: all cores)")
    ap.add_argument("--style", default="drawing", choices=["drawing", "photo"],
                    help="drawing: line art on paper (cartoons); photo: textured colour images (decode like photos)")
    a = ap.parse_args()
    if a.images < 1 or a.n < 1:
        raise SystemExit("--n and --images must be >= 1")
    os.makedirs(os.path.join(a.out, "images"), exist_ok=True)
    jobs = [(a.out, a.seed, i, a.style) for i in range(a.images)]
    n_proc = max(1, min(a.jobs or os.cpu_count() or 1, a.images))
    if n_proc == 1:
        for j in jobs:
            render(j)
    else:
        with Pool(n_proc) as pool:
            for _ in pool.imap_unordered(render, jobs, chunksize=4):
                pass
    rng = random.Random(a.seed)
    rows = [r if r < a.images else rng.randrange(a.images) for r in range(a.n)]
    rng.shuffle(rows)
    tmp = os.path.join(a.out, "captions.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for img in rows:
            cap = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 25)))
            f.write(json.dumps({"image": "images/%06d.jpg" % img, "caption": cap}) + "\n")
    os.replace(tmp, os.path.join(a.out, "captions.jsonl"))
    print(f"wrote {a.images} images and {a.n} captions to {a.out} ({n_proc} processes)", file=sys.stderr)


if __name__ == "__main__":
    main()
