#!/usr/bin/env python3
"""Fallback data for the GPU check when `bridgetune synth` could not be built: N JPEG line drawings
(~740x700, q90) + captions.jsonl in the layout `bridgetune synth` writes. Needs only Pillow.

  python3 bench/gpu/make_images.py --out DIR --n 1000 --images 250
"""
import argparse
import json
import os
import random

from PIL import Image, ImageDraw, ImageFilter

WORDS = ("the cat said a man woman dog office boss meeting coffee why cannot we just talk about "
         "this later again tomorrow my lawyer says desert island doctor patient").split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--images", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.out, "images"), exist_ok=True)
    for i in range(a.images):
        w, h = rng.randint(660, 820), rng.randint(640, 760)
        im = Image.effect_noise((w, h), 12).convert("RGB").point(lambda v: 200 + v // 5)
        d = ImageDraw.Draw(im)
        for _ in range(rng.randint(20, 60)):
            pts = [(rng.randint(0, w), rng.randint(0, h)) for _ in range(rng.randint(2, 6))]
            d.line(pts, fill=(rng.randint(0, 80),) * 3, width=rng.randint(1, 4))
        im.filter(ImageFilter.SMOOTH).save(os.path.join(a.out, "images", "%06d.jpg" % i), quality=90)
    with open(os.path.join(a.out, "captions.jsonl"), "w") as f:
        for r in range(a.n):
            cap = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 25)))
            f.write(json.dumps({"image": "images/%06d.jpg" % (r % a.images), "caption": cap}) + "\n")


if __name__ == "__main__":
    main()
