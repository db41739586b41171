#!/usr/bin/python3
"""Re-encodes a captions.jsonl folder's images (bridgetune synth) into another format with Pillow, the same pictures
and captions, for the loader's per-format speed rows (docs/PERFORMANCE.md, "Other image formats").

    /usr/bin/python3 bench/python/reencode_images.py --data /tmp/fmt_jpeg --out /tmp/fmt_webp --format webp

WebP: lossy, quality 90 (Pillow's default method 4); PNG: RGB, Pillow's default zlib level (6). The captions file is
rewritten to name the new files; nothing else changes.
"""
import argparse
import json
import os

from PIL import Image

SAVE = {"webp": dict(format="WEBP", quality=90), "png": dict(format="PNG")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="folder with captions.jsonl and the images it names")
    ap.add_argument("--out", required=True)
    ap.add_argument("--format", required=True, choices=sorted(SAVE))
    a = ap.parse_args()
    os.makedirs(os.path.join(a.out, "images"), exist_ok=True)
    done, lines = {}, []
    with open(os.path.join(a.data, "captions.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            src = row["image"]
            if src not in done:
                done[src] = os.path.join("images", os.path.splitext(os.path.basename(src))[0] + "." + a.format)
                with Image.open(os.path.join(a.data, src)) as im:
                    im.convert("RGB").save(os.path.join(a.out, done[src]), **SAVE[a.format])
            row["image"] = done[src]
            lines.append(json.dumps(row) + "\n")
    with open(os.path.join(a.out, "captions.jsonl"), "w") as f:
        f.writelines(lines)
    print(f"{len(done)} images, {len(lines)} rows -> {a.out}")


if __name__ == "__main__":
    main()
