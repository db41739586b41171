#!/usr/bin/python3
"""The format corpus of tests/media/formats: WebP, GIF, BMP and TIFF files of each layout (and JPEGs with libjpeg
warnings), with what Pillow 9.4 and torchvision (Debian's python3-pil, python3-torchvision) make of them.

Run by hand from the repository root, never by a test:  /usr/bin/python3 scripts/golden/make_format_corpus.py
Writes tests/media/formats/: the inputs, two PNGs per input and manifest.txt, one line per input:
  INPUT  W H  DECODED.png  S  EVAL.png
DECODED.png is Image.open(INPUT).convert("RGB"); EVAL.png is torchvision's Resize([S], BICUBIC) + CenterCrop(S)
of it (the eval transform `preprocess` runs). Files Pillow cannot write (BMP bitfields, RLE, OS/2 headers; TIFFs
tiled, planar, 16-bit RGB, premultiplied; GIFs with a frame off the screen) are written byte by byte here.
Deterministic: fixed seeds, no time stamps.
"""
import io
import math
import os
import random
import struct

from PIL import Image, ImageDraw
from torchvision import transforms

OUT = "tests/media/formats"
S = 32
W, H = 48, 36
lines = []


def picture(w=W, h=H, seed=1):
    """Gradients, hard edges and a few flat areas: what resampling and lossy codecs react to."""
    rnd = random.Random(seed)
    im = Image.new("RGB", (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            px[x, y] = (int(255 * x / (w - 1)), int(128 + 100 * math.sin(y / 3.0)), int(255 * y / (h - 1)))
    d = ImageDraw.Draw(im)
    for _ in range(4):
        x0, y0 = rnd.randrange(w), rnd.randrange(h)
        r = rnd.randrange(3, max(4, min(w, h) // 3))
        d.ellipse([x0 - r, y0 - r, x0 + r, y0 + r], outline=(10, 10, 10),
                  fill=(rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    d.line([0, h - 1, w - 1, 0], fill=(0, 0, 0), width=2)
    return im


def with_alpha(im):
    a = Image.new("L", im.size)
    a.putdata([(x * 255 // (im.size[0] - 1) + y * 40) % 256 for y in range(im.size[1]) for x in range(im.size[0])])
    out = im.convert("RGBA")
    out.putalpha(a)
    return out


def add(name, data):
    """Writes the input and Pillow's + torchvision's view of it."""
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(data)
    rgb = Image.open(path).convert("RGB")
    stem = name.replace(".", "_")
    rgb.save(os.path.join(OUT, stem + ".png"))
    tf = transforms.Compose([transforms.Resize([S], interpolation=transforms.InterpolationMode.BICUBIC),
                             transforms.CenterCrop(S)])
    tf(rgb).save(os.path.join(OUT, stem + f"_eval{S}.png"))
    lines.append(f"{name} {rgb.size[0]} {rgb.size[1]} {stem}.png {S} {stem}_eval{S}.png")


def saved(im, fmt, **kw):
    b = io.BytesIO()
    im.save(b, fmt, **kw)
    return b.getvalue()


# ---------------------------------------------------------------- WebP (libwebp through Pillow)
def webp_cases():
    pic = picture(seed=2)
    add("lossy.webp", saved(pic, "WEBP", quality=70))
    add("lossless.webp", saved(pic, "WEBP", lossless=True))
    add("lossy_alpha.webp", saved(with_alpha(pic), "WEBP", quality=60))
    add("lossless_alpha.webp", saved(with_alpha(pic), "WEBP", lossless=True, exact=True))
    frames = [picture(seed=s) for s in (3, 4, 5)]
    add("animated.webp", saved(frames[0], "WEBP", save_all=True, append_images=frames[1:], duration=80,
                               lossless=True))
    add("animated_lossy.webp", saved(frames[1], "WEBP", save_all=True, append_images=frames[2:], duration=80,
                                     quality=50))


# ---------------------------------------------------------------- GIF (Pillow's own writer)
def gif_blocks(data):
    """(header end, [(offset, kind)]) of a GIF's blocks up to the first image descriptor."""
    flags = data[10]
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    while data[pos] == 0x21:  # extensions
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    assert data[pos] == 0x2C
    return pos


def gif_cases():
    pic = picture(seed=6)
    add("palette.gif", saved(pic.quantize(colors=64), "GIF", interlace=False))
    add("interlaced.gif", saved(pic.quantize(colors=200), "GIF", interlace=True))
    add("grey.gif", saved(pic.convert("L"), "GIF"))
    add("four_colours.gif", saved(pic.quantize(colors=4), "GIF", interlace=False))
    p = pic.quantize(colors=32)
    add("transparent.gif", saved(p, "GIF", transparency=3))
    frames = [picture(seed=s).quantize(colors=48) for s in (7, 8, 9)]
    add("animated.gif", saved(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0))
    # The first frame off the logical screen: a 48x36 screen, the 30x20 frame at (5, 4), transparent index 3
    # (the canvas takes its colour); and one reaching past the screen (Pillow grows the image).
    small = picture(30, 20, seed=10).quantize(colors=16)
    for name, screen, at in (("offset.gif", (W, H), (5, 4)), ("past_screen.gif", (20, 12), (6, 3))):
        b = bytearray(saved(small, "GIF", transparency=3, interlace=False))
        b[6:10] = struct.pack("<HH", *screen)
        d = gif_blocks(b)
        b[d + 1:d + 5] = struct.pack("<HH", *at)
        add(name, bytes(b))


# ---------------------------------------------------------------- BMP
def bmp_file(width, height, bits, rows, palette=b"", compression=0, masks=b"", header=40, top_down=False):
    """rows: the stored rows (already padded), bottom-up unless top_down."""
    data = b"".join(rows)
    if header == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        info = struct.pack("<IiiHHIIiiII", header, width, -height if top_down else height, 1, bits, compression,
                           len(data), 2835, 2835, len(palette) // 4 if palette else 0, 0)
        info += masks[:16] if header > 40 else b""
        info += b"\0" * (header - len(info))
    extra = masks if header == 40 else b""
    offset = 14 + len(info) + len(extra) + len(palette)
    return b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset) + info + extra + palette + data


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def rle8(indices, width, height):
    out = bytearray()
    for y in range(height):
        row = indices[y * width:(y + 1) * width]
        x = 0
        if y % 3 == 1 and width >= 6:  # an absolute run of 5 (padded to a word)
            out += bytes([0, 5]) + bytes(row[:5]) + b"\0"
            x = 5
        while x < width:
            n = 1
            while x + n < width and row[x + n] == row[x] and n < 255:
                n += 1
            out += bytes([n, row[x]])
            x += n
        out += b"\0\0"
    return bytes(out + b"\0\1")


def rle4(indices, width, height):
    out = bytearray()
    for y in range(height):
        row = indices[y * width:(y + 1) * width]
        x = 0
        if y % 2 == 0 and width >= 8:  # an absolute run of 4 pixels (2 bytes, a word)
            out += bytes([0, 4, row[0] << 4 | row[1], row[2] << 4 | row[3]])
            x = 4
        while x < width:  # runs of alternating pairs a, b
            a = row[x]
            b = row[x + 1] if x + 1 < width else 0
            n = 2 if x + 1 < width else 1
            while x + n + 1 < width and n < 254 and row[x + n] == a and row[x + n + 1] == b:
                n += 2
            out += bytes([n, a << 4 | b])
            x += n
        out += b"\0\0"
    return bytes(out + b"\0\1")


def bmp_cases():
    pic = picture(seed=11)
    add("rgb24.bmp", saved(pic, "BMP"))
    add("grey8.bmp", saved(pic.convert("L"), "BMP"))
    add("palette8.bmp", saved(pic.quantize(colors=100), "BMP"))
    add("bilevel.bmp", saved(pic.convert("1"), "BMP"))
    add("rgba32.bmp", saved(with_alpha(pic), "BMP"))
    w, h = pic.size
    px = list(pic.getdata())
    rows = lambda f, bpp: [pad4(b"".join(f(px[y * w + x]) for x in range(w))) for y in reversed(range(h))]
    add("rgb555.bmp", bmp_file(w, h, 16, rows(lambda p: struct.pack("<H", (p[0] >> 3) << 10 | (p[1] >> 3) << 5 | p[2] >> 3), 2)))
    add("bitfields565.bmp", bmp_file(w, h, 16, rows(lambda p: struct.pack("<H", (p[0] >> 3) << 11 | (p[1] >> 2) << 5 | p[2] >> 3), 2),
                                     compression=3, masks=struct.pack("<III", 0xF800, 0x7E0, 0x1F)))
    add("bitfields_rgba_v4.bmp", bmp_file(w, h, 32, rows(lambda p: bytes([p[0], p[1], p[2], 200]), 4), compression=3,
                                          masks=struct.pack("<IIII", 0xFF, 0xFF00, 0xFF0000, 0xFF000000), header=108))
    add("top_down.bmp", bmp_file(w, h, 24, list(reversed(rows(lambda p: bytes([p[2], p[1], p[0]]), 3))), top_down=True))
    add("os2_24.bmp", bmp_file(w, h, 24, rows(lambda p: bytes([p[2], p[1], p[0]]), 3), header=12))
    q = pic.quantize(colors=16)
    pal = q.getpalette()[:48]
    pal4 = b"".join(bytes([pal[3 * i + 2], pal[3 * i + 1], pal[3 * i], 0]) for i in range(16))
    idx = list(q.getdata())
    rows4 = [pad4(bytes(idx[y * w + x] << 4 | (idx[y * w + x + 1] if x + 1 < w else 0) for x in range(0, w, 2)))
             for y in reversed(range(h))]
    add("palette4.bmp", bmp_file(w, h, 4, rows4, palette=pal4))
    flipped = [i for y in reversed(range(h)) for i in idx[y * w:(y + 1) * w]]
    add("rle4.bmp", bmp_file(w, h, 4, [rle4(flipped, w, h)], palette=pal4, compression=2))
    q8 = pic.quantize(colors=60)
    pal8 = q8.getpalette()[:180]
    pal8 = b"".join(bytes([pal8[3 * i + 2], pal8[3 * i + 1], pal8[3 * i], 0]) for i in range(60))
    idx8 = list(q8.getdata())
    flipped8 = [i for y in reversed(range(h)) for i in idx8[y * w:(y + 1) * w]]
    add("rle8.bmp", bmp_file(w, h, 8, [rle8(flipped8, w, h)], palette=pal8, compression=1))


# ---------------------------------------------------------------- TIFF
def tiff_file(width, height, entries, strips, big_endian=False):
    """A one-IFD TIFF: entries {tag: (type, [values])} (StripOffsets/TileOffsets filled in), strips: data."""
    e = ">" if big_endian else "<"
    data_at = 8
    blob = b"".join(strips)
    offsets, at = [], data_at
    for s in strips:
        offsets.append(at)
        at += len(s)
    ifd_at = at + (at % 2)
    off_tag = 324 if 322 in entries else 273
    cnt_tag = 325 if 322 in entries else 279
    entries = dict(entries)
    entries[off_tag] = (4, offsets)
    entries[cnt_tag] = (4, [len(s) for s in strips])
    sizes = {1: 1, 3: 2, 4: 4}
    extra = b""
    ext_at = ifd_at + 2 + 12 * len(entries) + 4
    body = struct.pack(e + "H", len(entries))
    for tag in sorted(entries):
        typ, vals = entries[tag]
        fmt = {1: "B", 3: "H", 4: "I"}[typ]
        raw = struct.pack(e + fmt * len(vals), *vals)
        if len(raw) <= 4:
            body += struct.pack(e + "HHI", tag, typ, len(vals)) + raw + b"\0" * (4 - len(raw))
        else:
            body += struct.pack(e + "HHII", tag, typ, len(vals), ext_at + len(extra))
            extra += raw + b"\0" * (len(raw) % 2)
    body += struct.pack(e + "I", 0)
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", ifd_at)
    return head + blob + b"\0" * (ifd_at - at) + body + extra


def tiff_cases():
    pic = picture(seed=12)
    w, h = pic.size
    add("rgb_lzw.tif", saved(pic, "TIFF", compression="tiff_lzw"))
    add("rgb_deflate.tif", saved(pic, "TIFF", compression="tiff_adobe_deflate"))
    add("rgb_raw.tif", saved(pic, "TIFF"))
    add("rgb_packbits.tif", saved(pic, "TIFF", compression="packbits"))
    add("rgb_jpeg.tif", saved(pic, "TIFF", compression="jpeg", quality=80))
    add("ycbcr_jpeg.tif", saved(pic.convert("YCbCr"), "TIFF", compression="jpeg", quality=80))
    add("ycbcr_lzw.tif", saved(pic.convert("YCbCr"), "TIFF", compression="tiff_lzw"))  # libtiff's RGBA interface
    add("rgba_lzw.tif", saved(with_alpha(pic), "TIFF", compression="tiff_lzw"))
    add("grey_lzw.tif", saved(pic.convert("L"), "TIFF", compression="tiff_lzw"))
    add("la.tif", saved(pic.convert("LA"), "TIFF"))
    add("bilevel_g4.tif", saved(pic.convert("1"), "TIFF", compression="group4"))
    add("palette.tif", saved(pic.quantize(colors=50), "TIFF", compression="tiff_lzw"))
    add("cmyk.tif", saved(pic.convert("CMYK"), "TIFF"))
    add("cmyk_lzw.tif", saved(pic.convert("CMYK"), "TIFF", compression="tiff_lzw"))
    grey16 = Image.frombytes("I;16", (w, h), b"".join(struct.pack("<H", (x * 37 + y * 300) % 65536)
                                                      for y in range(h) for x in range(w)))
    add("grey16.tif", saved(grey16, "TIFF"))
    add("grey16_deflate.tif", saved(grey16, "TIFF", compression="tiff_adobe_deflate"))
    add("multipage.tif", saved(pic, "TIFF", save_all=True, append_images=[picture(seed=13)], compression="tiff_lzw"))
    add("orientation6.tif", saved(pic, "TIFF", tiffinfo={274: 6}))
    add("orientation3.tif", saved(pic, "TIFF", compression="tiff_lzw", tiffinfo={274: 3}))
    px = list(pic.getdata())
    base = {256: (4, [w]), 257: (4, [h]), 259: (3, [1]), 262: (3, [2]), 277: (3, [3])}
    rgb16 = b"".join(struct.pack(">HHH", p[0] * 257, p[1] * 250 + 3, p[2] * 256 + 255) for p in px)
    add("rgb16_be.tif", tiff_file(w, h, {**base, 258: (3, [16, 16, 16]), 278: (4, [h])}, [rgb16], big_endian=True))
    planes = [bytes(p[c] for p in px) for c in range(3)]
    add("planar.tif", tiff_file(w, h, {**base, 258: (3, [8, 8, 8]), 278: (4, [h]), 284: (3, [2])}, planes))
    premul = b"".join(bytes([p[0] * a // 255, p[1] * a // 255, p[2] * a // 255, a])
                      for i, p in enumerate(px) for a in [(i * 7) % 256])
    add("premultiplied.tif", tiff_file(w, h, {**base, 258: (3, [8] * 4), 277: (3, [4]), 278: (4, [h]),
                                              338: (3, [1])}, [premul]))
    tiles = []
    for ty in range(0, h, 16):
        for tx in range(0, w, 16):
            tiles.append(b"".join(bytes(px[y * w + x]) if x < w and y < h else b"\0\0\0"
                                  for y in range(ty, ty + 16) for x in range(tx, tx + 16)))
    add("tiled.tif", tiff_file(w, h, {**base, 258: (3, [8, 8, 8]), 322: (3, [16]), 323: (3, [16])}, tiles))
    grey2 = bytes(sum(((px[y * w + x + k][1] >> 6) << (6 - 2 * k)) for k in range(4)) for y in range(h)
                  for x in range(0, w, 4))
    add("minwhite2.tif", tiff_file(w, h, {256: (4, [w]), 257: (4, [h]), 258: (3, [2]), 259: (3, [1]),
                                          262: (3, [0]), 277: (3, [1]), 278: (4, [h])}, [grey2]))


# ---------------------------------------------------------------- JPEGs with libjpeg warnings
def jpeg_cases():
    jpg = saved(picture(seed=14), "JPEG", quality=85)
    at = jpg.find(b"\xff\xdb")
    for n in (1, 4, 5, 16):  # "Corrupt JPEG data: n extraneous bytes before marker 0xdb"
        add(f"extraneous{n}.jpg", jpg[:at] + bytes([0x5A] * n) + jpg[at:])


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    webp_cases()
    gif_cases()
    bmp_cases()
    tiff_cases()
    jpeg_cases()
    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
