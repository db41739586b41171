#!/usr/bin/python3
"""Golden files for tests/media: what Pillow 9.4 (Debian's python3-pil) and torchvision's PIL transforms do.

Run from the repository root with Debian's interpreter:  /usr/bin/python3 scripts/golden/make_pillow_golden.py
Writes tests/media/golden/: inputs (JPEG/PNG), expected outputs, and manifest.txt, one case per line:
  decode   INPUT  W H  EXPECTED.rgb                 Image.open(INPUT).convert("RGB"), raw RGB bytes
  eval     INPUT  S    EXPECTED.png                 Resize(S, BICUBIC) + CenterCrop(S), torchvision semantics
  crop     INPUT  S top left h w  EXPECTED.png      img.crop(...).resize((S, S), BICUBIC) (resized_crop)
Deterministic: fixed seeds, no time stamps.
"""
import math
import os
import random

from PIL import Image, ImageDraw

OUT = "tests/media/golden"
lines = []


def cartoon(w, h, seed):
    """Line drawing on off-white paper, a coloured wash and a gradient: smooth areas plus hard edges."""
    rnd = random.Random(seed)
    im = Image.new("RGB", (w, h), (246, 241, 228))
    d = ImageDraw.Draw(im)
    for y in range(0, h, 4):  # a soft vertical gradient band on the left third
        c = int(180 + 60 * y / max(h - 1, 1))
        d.rectangle([0, y, w // 3, y + 3], fill=(c, 200, 255 - c // 2))
    for _ in range(6):
        x0, y0 = rnd.randrange(w), rnd.randrange(h)
        r = rnd.randrange(2, max(3, min(w, h) // 3))
        d.ellipse([x0 - r, y0 - r, x0 + r, y0 + r], outline=(20, 20, 20), width=max(1, r // 12),
                  fill=(rnd.randrange(150, 255), rnd.randrange(120, 230), rnd.randrange(90, 200)))
    for _ in range(12):
        d.line([rnd.randrange(w), rnd.randrange(h), rnd.randrange(w), rnd.randrange(h)], fill=(0, 0, 0),
               width=rnd.choice([1, 2, 3]))
    return im


def resize_eval(im, s):
    w, h = im.size
    short, long_ = (w, h) if w <= h else (h, w)
    new_short, new_long = s, int(s * long_ / short)
    nw, nh = (new_short, new_long) if w <= h else (new_long, new_short)
    r = im.resize((nw, nh), Image.BICUBIC)
    top = int(round((nh - s) / 2.0))
    left = int(round((nw - s) / 2.0))
    return r.crop((left, top, left + s, top + s))


def save_eval(name, im_file, s):
    im = Image.open(os.path.join(OUT, im_file)).convert("RGB")
    out = f"{name}_eval{s}.png"
    resize_eval(im, s).save(os.path.join(OUT, out), optimize=True)
    lines.append(f"eval {im_file} {s} {out}")


def save_decode(name, im_file):
    im = Image.open(os.path.join(OUT, im_file)).convert("RGB")
    out = f"{name}.rgb"
    with open(os.path.join(OUT, out), "wb") as f:
        f.write(im.tobytes())
    lines.append(f"decode {im_file} {im.size[0]} {im.size[1]} {out}")


def main():
    os.makedirs(OUT, exist_ok=True)
    # Resize cases: JPEG inputs (decode must match too), one PNG; down- and upscales, odd sizes.
    for (w, h, s, fmt) in [(736, 699, 288, "jpg"), (1203, 800, 224, "jpg"), (300, 301, 288, "jpg"),
                           (64, 1000, 96, "jpg"), (288, 288, 288, "png"), (17, 9, 32, "png"),
                           (799, 1203, 160, "jpg")]:
        name = f"cartoon_{w}x{h}"
        f = f"{name}.{fmt}"
        im = cartoon(w, h, seed=w * 7 + h)
        if fmt == "jpg":
            im.save(os.path.join(OUT, f), quality=90)
        else:
            im.save(os.path.join(OUT, f))
        save_eval(name, f, s)
    # 736x699 at 294 too (bridgetower-large's size).
    save_eval("cartoon_736x699", "cartoon_736x699.jpg", 294)

    # RandomResizedCrop's resize: crop() then resize((S, S)), for fixed rectangles.
    src = Image.open(os.path.join(OUT, "cartoon_736x699.jpg")).convert("RGB")
    for (top, left, h, w) in [(10, 20, 400, 333), (0, 0, 699, 736), (650, 700, 49, 36), (123, 45, 301, 517)]:
        out = f"crop_{top}_{left}_{h}_{w}.png"
        src.crop((left, top, left + w, top + h)).resize((288, 288), Image.BICUBIC).save(os.path.join(OUT, out),
                                                                                       optimize=True)
        lines.append(f"crop cartoon_736x699.jpg 288 {top} {left} {h} {w} {out}")

    # Decode cases: small images in every colour layout convert("RGB") has to handle.
    base = cartoon(40, 30, seed=5)
    base.convert("L").save(os.path.join(OUT, "gray.jpg"), quality=90)
    save_decode("gray_jpg", "gray.jpg")
    base.convert("CMYK").save(os.path.join(OUT, "cmyk.jpg"), quality=90)
    save_decode("cmyk_jpg", "cmyk.jpg")
    base.save(os.path.join(OUT, "progressive.jpg"), quality=85, progressive=True)
    save_decode("progressive_jpg", "progressive.jpg")
    base.save(os.path.join(OUT, "sub444.jpg"), quality=90, subsampling=0)
    save_decode("sub444_jpg", "sub444.jpg")
    base.quantize(colors=16).save(os.path.join(OUT, "palette.png"))
    save_decode("palette_png", "palette.png")
    rgba = base.convert("RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize((40, 30)))
    rgba.save(os.path.join(OUT, "rgba.png"))
    save_decode("rgba_png", "rgba.png")
    base.convert("LA").save(os.path.join(OUT, "la.png"))
    save_decode("la_png", "la.png")
    base.convert("1").save(os.path.join(OUT, "bilevel.png"))
    save_decode("bilevel_png", "bilevel.png")
    # 16-bit: Pillow cannot write 16-bit RGB PNGs, so build the file by hand (zlib + chunks).
    write_png16(os.path.join(OUT, "rgb16.png"), 40, 30, 2)
    save_decode("rgb16_png", "rgb16.png")
    write_png16(os.path.join(OUT, "gray16.png"), 40, 30, 0)
    save_decode("gray16_png", "gray16.png")

    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_png16(path, w, h, color_type):
    import struct
    import zlib
    ch = 3 if color_type == 2 else 1
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        for x in range(w):
            for c in range(ch):
                # Spans the whole 16-bit range, including values < 256 (Pillow clips gray16 to 255).
                v = (x * 1637 + y * 2111 + c * 9000) % 65536 if (x + y) % 3 else (x * 7 + y) % 300
                raw += struct.pack(">H", v)

    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data) & 0xffffffff)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
# (Also committed: cartoon_17x9_eval32_u8.npy = numpy.save() of cartoon_17x9_eval32.png, for the CLI test,
#  made with: numpy.save(path, numpy.asarray(Image.open(png).convert("RGB"))).)
