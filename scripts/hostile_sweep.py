#!/usr/bin/python3
"""Hostile-input sweep: feeds bridgetune crafted inputs and counts crashes, hangs and unbounded allocations.

Usage: /usr/bin/python3 scripts/hostile_sweep.py [BUILD_DIR [GROUP,...]] (default build, every group; a group is a
*_cases function name without _cases, e.g. decode_memory,model_size). Each case runs the built binary
(bench-loader for data, info for config.json, train --resume_from_checkpoint for checkpoints; evaluate, encode,
search, preprocess and the Python module's preprocess for images) and checks the generic rules of issue 25: no
signal (crash), no hang past 30 s, peak RSS at most 400 MB (an unbounded allocation), exit code 0 or 1, no raw
control bytes on stdout/stderr, no libtorch backtrace text, no line over 2 KB, and when it fails: exactly one
"error:" line, and no quoted content of a file the case marks secret. Prints one line per case and a summary;
exits 1 if anything is wrong. Needs about 4 minutes on 2 cores.
"""
import glob, json, os, resource, shutil, struct, subprocess, sys, tarfile, io, tempfile, time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
EXE = os.path.abspath(os.path.join(BUILD, "bridgetune"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOOD_JPG = os.path.join(ROOT, "tests/media/golden/cartoon_1203x800.jpg")
GOOD_PNG = os.path.join(ROOT, "tests/media/golden/crop_10_20_400_333.png")
PARQUET = os.path.join(ROOT, "tests/parquet/fixtures/images_uncompressed_v1.parquet")
FIXTURE = os.path.join(ROOT, "tests/fixtures/bridgetower-tiny")
SECRET = b"TOPSECRET-CONTENT-42"
LIMIT_S, RSS_LIMIT_KB, LINE_LIMIT = 30, 400 * 1000 * 1000 // 1024, 2048  # ru_maxrss is in KiB
PYTHON_MODULE = os.path.abspath(os.path.join(BUILD, "python"))
results = []

# The cases run from a small process of their own, started before any case builds its inputs: a child's peak RSS
# (wait4's ru_maxrss) includes the resident memory of the process it was forked from, and this one grows to
# hundreds of MB while it builds hostile files. One JSON request per line: {"cmd", "out", "err"} ->
# {"code" (negative: the signal), "hang", "rss" (KiB)}.
SPAWNER = r"""
import json, os, subprocess, sys, time
env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=sys.argv[1])
for line in sys.stdin:
    r = json.loads(line)
    t0, hang = time.time(), False
    with open(r["out"], "wb") as fo, open(r["err"], "wb") as fe:
        p = subprocess.Popen(r["cmd"], stdout=fo, stderr=fe, env=env)
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.time() - t0 > float(sys.argv[2]):
            hang = True
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.02)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    print(json.dumps({"code": code, "hang": hang, "rss": ru.ru_maxrss}), flush=True)
"""
spawner = subprocess.Popen([sys.executable, "-c", SPAWNER, PYTHON_MODULE, str(LIMIT_S)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)


def run_case(name, args, expect_ok=None, secret=False, command=None):
    """Runs bridgetune with `args` (or `command`, a whole command line) and records what went wrong."""
    t0 = time.time()
    with tempfile.NamedTemporaryFile() as fo, tempfile.NamedTemporaryFile() as fe:
        spawner.stdin.write(json.dumps({"cmd": command or [EXE] + args, "out": fo.name, "err": fe.name}) + "\n")
        spawner.stdin.flush()
        r = json.loads(spawner.stdout.readline())
        hang, code, rss = r["hang"], r["code"], r["rss"]
        out, err = open(fo.name, "rb").read(), open(fe.name, "rb").read()
    problems = []
    if hang:
        problems.append("hang")
    elif code < 0:
        problems.append("crash (signal %d)" % -code)
    elif code not in (0, 1):
        problems.append("exit code %d" % code)
    if rss > RSS_LIMIT_KB:
        problems.append("rss %d MB" % (rss * 1024 // 1000000))
    text = out + err
    if any(b < 0x20 and b not in (0x0a, 0x0d) or b == 0x1b or b == 0x7f for b in text.replace(b"\r\x1b[K", b"")):
        problems.append("raw control byte in output")
    if secret and SECRET in text:
        problems.append("echoed file contents")
    if b"frame #" in text or b"Exception raised from" in text:
        problems.append("backtrace text")
    if any(len(l) > LINE_LIMIT for l in text.splitlines()):
        problems.append("line over 2 KB")
    if code == 1 and command is None:
        lines = [l for l in err.splitlines() if l.startswith(b"error:")]
        if len(lines) != 1 or b"Traceback" in err:
            problems.append("not one error line")
    if expect_ok is not None and (code == 0) != expect_ok and not problems:
        problems.append("expected %s" % ("success" if expect_ok else "an error"))
    msg = (err.splitlines() or [b""])[-1][:150].decode("utf-8", "replace")
    results.append((name, problems, time.time() - t0, rss * 1024 // 1000000))
    print("%-52s %4d MB %s  %s" % (name, rss * 1024 // 1000000, "FAIL " + ", ".join(problems) if problems else "ok", msg),
          flush=True)


def loader(data, *extra):
    return ["bench-loader", "--data", data, "--workers", "1", "--batch", "1", "--samples", "4", "--repeats", "1",
            "--image_size", "32"] + list(extra)


def captions_case(tmp, name, image_ref, make=None, secret=False):
    d = os.path.join(tmp, "img_" + name)
    os.makedirs(d)
    if make:
        make(d)
    shutil.copy(GOOD_JPG, os.path.join(d, "good.jpg"))
    with open(os.path.join(d, "captions.jsonl"), "w") as f:
        f.write(json.dumps({"image": image_ref, "caption": "bad"}) + "\n")
        f.write(json.dumps({"image": "good.jpg", "caption": "good"}) + "\n")
    run_case("image/%s (error)" % name, loader(d), expect_ok=False, secret=secret)
    run_case("image/%s (skip)" % name, loader(d, "--on_bad_sample", "skip"), secret=secret)


def write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)


def image_cases(tmp):
    jpg = open(GOOD_JPG, "rb").read()
    png = open(GOOD_PNG, "rb").read()
    sof = jpg.find(b"\xff\xc0") if jpg.find(b"\xff\xc0") > 0 else jpg.find(b"\xff\xc2")
    huge_jpg = jpg[:sof + 5] + b"\xff\xff\xff\xff" + jpg[sof + 9:]
    huge_png = png[:16] + struct.pack(">II", 1 << 30, 1 << 30) + png[24:]
    cases = {
        "empty": lambda d: write(d + "/x.jpg", b""),
        "one_byte": lambda d: write(d + "/x.jpg", b"\xff"),
        "secret_text": lambda d: write(d + "/x.jpg", SECRET + b" not an image"),
        "truncated_jpeg_half": lambda d: write(d + "/x.jpg", jpg[: len(jpg) // 2]),
        "truncated_jpeg_header": lambda d: write(d + "/x.jpg", jpg[:200]),
        "jpeg_magic_garbage": lambda d: write(d + "/x.jpg", b"\xff\xd8\xff" + os.urandom(5000)),
        "jpeg_65535_square": lambda d: write(d + "/x.jpg", huge_jpg),
        "jpeg_bitflips": lambda d: write(d + "/x.jpg", bytes(b ^ 0x10 if i % 97 == 50 else b for i, b in enumerate(jpg))),
        "png_2^30_square": lambda d: write(d + "/x.jpg", huge_png),
        "png_truncated": lambda d: write(d + "/x.jpg", png[: len(png) // 3]),
        "png_bad_crc": lambda d: write(d + "/x.jpg", png[:29] + bytes([png[29] ^ 1]) + png[30:]),
        "png_magic_garbage": lambda d: write(d + "/x.jpg", png[:8] + os.urandom(3000)),
        "sparse_100GB": lambda d: sparse(d + "/x.jpg", 100 << 30),
        "over_cap_70MB": lambda d: sparse(d + "/x.jpg", 70 << 20),
        "fifo": lambda d: os.mkfifo(d + "/x.jpg"),
        "folder": lambda d: os.makedirs(d + "/x.jpg"),
        "symlink_dev_zero": lambda d: os.symlink("/dev/zero", d + "/x.jpg"),
        "symlink_dangling": lambda d: os.symlink(d + "/nowhere", d + "/x.jpg"),
        "symlink_loop": lambda d: (os.symlink(d + "/y.jpg", d + "/x.jpg"), os.symlink(d + "/x.jpg", d + "/y.jpg")),
        "missing": None,
    }
    for name, make in cases.items():
        captions_case(tmp, name, "x.jpg", make, secret=(name == "secret_text"))
    captions_case(tmp, "dev_zero", "/dev/zero")
    captions_case(tmp, "dev_urandom", "/dev/urandom")
    captions_case(tmp, "etc_passwd", "/etc/passwd", secret=True)
    captions_case(tmp, "name_with_escapes", "evil\x1b]0;pwned\x07\x1b[2J.jpg")
    captions_case(tmp, "name_with_newline", "a\nb.jpg")
    captions_case(tmp, "dotdot_traversal", "../../../../../../etc/shadow")


def captions_file_cases(tmp):
    texts = {
        "empty": b"", "bom_only": b"\xef\xbb\xbf", "not_json": b"{{{{\n", "array_row": b"[1,2]\n",
        "missing_column": b'{"img": "a.jpg", "caption": "x"}\n', "caption_number": b'{"image": "a.jpg", "caption": 5}\n',
        "caption_bad_utf8": b'{"image": "a.jpg", "caption": "\xff\xfe"}\n',
        "caption_escapes": b'{"image": "a.jpg", "caption": "\\u001b[2J\\u0007"}\n',
        "deep_nesting": b'{"image": ' + b"[" * 100000 + b"]" * 100000 + b"}\n",
        "long_line_16MB": b'{"image": "a.jpg", "caption": "' + b"x" * (16 << 20) + b'"}\n',
        "many_blank_lines": b"\n" * 1000000,
    }
    for name, t in texts.items():
        d = os.path.join(tmp, "cap_" + name)
        os.makedirs(d)
        write(d + "/captions.jsonl", t)
        run_case("captions/%s" % name, loader(d), expect_ok=False)
    csvs = {"csv_broken_quote": b'image,caption\n"a.jpg,x\n', "csv_wrong_fields": b"image,caption\na.jpg,x,y\n",
            "csv_no_header_cols": b"foo,bar\na,b\n"}
    for name, t in csvs.items():
        p = os.path.join(tmp, name + ".csv")
        write(p, t)
        run_case("captions/%s" % name, loader(p), expect_ok=False)
    d = os.path.join(tmp, "cap_fifo")
    os.makedirs(d)
    os.mkfifo(d + "/captions.jsonl")
    run_case("captions/fifo", loader(d), expect_ok=False)
    d = os.path.join(tmp, "cap_dev_zero")
    os.makedirs(d)
    os.symlink("/dev/zero", d + "/captions.jsonl")
    run_case("captions/symlink_dev_zero", loader(d), expect_ok=False)


def tar_bytes(members, fmt=tarfile.USTAR_FORMAT):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        for name, data, kind in members:
            ti = tarfile.TarInfo(name)
            ti.type = kind
            if kind == tarfile.SYMTYPE:
                ti.linkname = "/etc/passwd"
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


def tar_cases(tmp):
    jpg = open(GOOD_JPG, "rb").read()
    good = [("a.jpg", jpg, tarfile.REGTYPE), ("a.txt", b"cap", tarfile.REGTYPE)]
    full = tar_bytes(good)
    claim = bytearray(tar_bytes([("big.jpg", b"", tarfile.REGTYPE)]))
    claim[124:136] = b"%011o\0" % (300 << 20)  # header claims 300 MB, no data follows
    claim[148:156] = b"        "
    claim[148:156] = b"%06o\0 " % sum(claim[:512])
    cases = {
        "empty": b"", "garbage": os.urandom(4096), "truncated": full[: len(full) // 2],
        "header_claims_300MB": bytes(claim),
        "no_caption": tar_bytes([("a.jpg", jpg, tarfile.REGTYPE)]),
        "json_not_object": tar_bytes([("a.jpg", jpg, tarfile.REGTYPE), ("a.json", b"[1]", tarfile.REGTYPE)]),
        "caption_bad_utf8": tar_bytes([("a.jpg", jpg, tarfile.REGTYPE), ("a.txt", b"\xff\xfe", tarfile.REGTYPE)]),
        "symlink_member": tar_bytes([("a.jpg", b"", tarfile.SYMTYPE), ("a.txt", b"x", tarfile.REGTYPE)]),
        "traversal_names": tar_bytes([("../../x.jpg", jpg, tarfile.REGTYPE), ("../../x.txt", b"c", tarfile.REGTYPE)]),
        "escape_names": tar_bytes([("e\x1b[2J.jpg", b"junk", tarfile.REGTYPE), ("e\x1b[2J.txt", b"c", tarfile.REGTYPE)]),
        "bad_image_bytes": tar_bytes([("a.jpg", SECRET, tarfile.REGTYPE), ("a.txt", b"c", tarfile.REGTYPE)]),
        "gz_corrupt": b"\x1f\x8b\x08\x00" + os.urandom(2000),
    }
    for name, data in cases.items():
        p = os.path.join(tmp, "t_%s.tar" % name) if name != "gz_corrupt" else os.path.join(tmp, "t_gz.tar.gz")
        write(p, data)
        # Member names are only keys (nothing is extracted): "../" names are harmless and may succeed.
        ok = None if name == "traversal_names" else False
        # Tar shards are read through their index only (the streaming reader was removed, issue 13).
        run_case("tar/%s" % name, loader(p), expect_ok=ok, secret=(name == "bad_image_bytes"))
    p = os.path.join(tmp, "t_over_limit.tar")
    write(p, full)
    run_case("tar/member_over_max_image_bytes", loader(p, "--max_image_bytes", "1000"), expect_ok=False)


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def parquet_file(footer):
    return b"PAR1" + footer + struct.pack("<I", len(footer)) + b"PAR1"


def parquet_cases(tmp):
    good = open(PARQUET, "rb").read()
    flen = struct.unpack("<I", good[-8:-4])[0]
    rg_amp = b"\x49\xfc" + varint(200000) + b"\x00" * 200000 + b"\x00"
    cols_amp = b"\x49\xfc" + varint(120) + (b"\x19\xfc" + varint(10000) + b"\x00" * 10000 + b"\x00") * 120 + b"\x00"
    schema_amp = b"\x29\xfc" + varint(20000) + b"\x00" * 20000 + b"\x00"
    cases = {
        "empty": b"", "no_magic": b"x" * 100, "footer_len_huge": b"PAR1" + b"\0" * 16 + struct.pack("<I", 0xFFFFFFF0) + b"PAR1",
        "footer_len_over_cap": b"PAR1" + b"\0" * (17 << 20) + struct.pack("<I", 17 << 20) + b"PAR1",
        "row_group_amplification": parquet_file(rg_amp), "column_amplification": parquet_file(cols_amp),
        "schema_amplification": parquet_file(schema_amp), "random_footer": parquet_file(os.urandom(3000)),
        "truncated": good[: len(good) // 2] + good[-8:], "zero_footer": parquet_file(b""),
        "footer_bitflips": good[:-8 - flen] + bytes(b ^ 0x41 if i % 31 == 7 else b for i, b in enumerate(good[-8 - flen:-8])) + good[-8:],
        "encrypted_magic": good[:-4] + b"PARE",
    }
    for name, data in cases.items():
        p = os.path.join(tmp, "p_%s.parquet" % name)
        write(p, data)
        run_case("parquet/%s" % name, loader(p), expect_ok=False)


class Thrift:
    """A minimal Thrift compact protocol writer, enough for parquet page headers and footers."""
    def __init__(self):
        self.b, self.last = bytearray(), [0]
    def field(self, fid, t):
        self.b.append(((fid - self.last[-1]) << 4) | t)
        self.last[-1] = fid
    def int(self, fid, v, t=5):
        self.field(fid, t)
        self.b += varint((v << 1) ^ (v >> 63))
    def str(self, fid, s):
        self.field(fid, 8)
        self.b += varint(len(s)) + s
    def begin(self, fid=None):
        if fid is not None:
            self.field(fid, 12)
        self.last.append(0)
    def end(self):
        self.b.append(0)
        self.last.pop()
    def list(self, fid, elem, n):
        self.field(fid, 9)
        self.b += bytes([(min(n, 15) << 4) | elem]) + (varint(n) if n >= 15 else b"")


def parquet_page(ptype, raw, num_values, encoding):
    import zlib
    body = zlib.compress(raw, 9)
    t = Thrift()
    t.int(1, ptype); t.int(2, len(raw)); t.int(3, len(body))
    t.begin(7 if ptype == 2 else 5)
    t.int(1, num_values); t.int(2, encoding)
    if ptype == 0:
        t.int(3, 3); t.int(4, 3)
    t.end()
    return bytes(t.b) + b"\0" + body


def parquet_dictionary_chunk(value_bytes, rows):
    """A gzip BYTE_ARRAY chunk: one dictionary value, repeated `rows` times by one RLE run of index 0."""
    dict_page = parquet_page(2, struct.pack("<I", value_bytes) + b"x" * value_bytes, 1, 0)
    return dict_page + parquet_page(0, b"\0" + varint(rows << 1), rows, 8)


def parquet_groups_file(chunk, rows, groups, shared):
    """Columns image (binary) and image_description (string), every group's chunks at the same bytes if shared."""
    body, offsets = bytearray(b"PAR1"), []
    for g in range(1 if shared else groups):
        offsets.append([len(body), len(body) + len(chunk)])
        body += chunk + chunk
    t = Thrift()
    t.int(1, 1)
    t.list(2, 12, 3)
    for el in ([(4, b"schema"), (5, 2)], [(1, 6), (3, 0), (4, b"image")], [(1, 6), (3, 0), (4, b"image_description")]):
        t.begin()
        for fid, v in el:
            t.str(fid, v) if isinstance(v, bytes) else t.int(fid, v)
        t.end()
    t.int(3, rows * groups, 6)
    t.list(4, 12, groups)
    for g in range(groups):
        t.begin()
        t.list(1, 12, 2)
        for c, name in enumerate((b"image", b"image_description")):
            off = offsets[0 if shared else g][c]
            t.begin(); t.int(2, off, 6); t.begin(3)
            t.int(1, 6); t.list(2, 5, 1); t.b += varint(0); t.list(3, 8, 1); t.b += varint(len(name)) + name
            t.int(4, 2); t.int(5, rows, 6); t.int(6, len(chunk), 6); t.int(7, len(chunk), 6); t.int(9, off, 6)
            t.end(); t.end()
        t.int(2, len(chunk), 6); t.int(3, rows, 6)
        t.end()
    t.b.append(0)
    return bytes(body) + bytes(t.b) + struct.pack("<I", len(t.b)) + b"PAR1"


def budget_cases(tmp):
    """Issue 25 class 3: small files that asked for gigabytes (parquet, pickle, safetensors, a captions line)."""
    bomb = parquet_dictionary_chunk((1 << 20) - 4, 1 << 20)
    small = parquet_dictionary_chunk(8, 1 << 20)
    cases = {
        "dictionary_bomb": parquet_groups_file(bomb, 1 << 20, 1, False),
        "shared_chunk_8_groups": parquet_groups_file(small, 1 << 20, 8, True),
        "rows_per_group_8x1M": parquet_groups_file(small, 1 << 20, 8, False),
    }
    for name, data in cases.items():
        p = os.path.join(tmp, "b_%s.parquet" % name)
        write(p, data)
        run_case("budget/parquet_%s (%d bytes)" % (name, len(data)), loader(p, "--caption_column", "image_description"),
                 expect_ok=False)
    d = os.path.join(tmp, "b_line")
    os.makedirs(d)
    with open(d + "/captions.jsonl", "wb") as f:
        f.write(b'{"image": "a.jpg", "caption": "')
        for _ in range(256):
            f.write(b"x" * (1 << 20))
        f.write(b'"}\n')
    run_case("budget/captions_256MiB_line", loader(d), expect_ok=False)
    header = b"{" + b",".join(b'"%d":{}' % k for k in range(3000000)) + b"}"
    for name, hdr in (("30MB_header_of_empty_entries", header), ("15MB_header_of_empty_entries", header[: 15 << 20].rsplit(b",", 1)[0] + b"}")):
        m = os.path.join(tmp, "b_st_" + name)
        shutil.copytree(FIXTURE, m)
        write(m + "/model.safetensors", struct.pack("<Q", len(hdr)) + hdr)
        run_case("budget/safetensors_%s" % name, ["info", "--model_name_or_path", m], expect_ok=False)
    for name, pkl in (("nested_tuple1_4MB", b"\x80\x02N" + b"\x85" * (4 << 20) + b"."),
                      ("flat_list_4MB", b"\x80\x02](" + b"N" * (4 << 20) + b"e.")):
        m = os.path.join(tmp, "b_pk_" + name)
        shutil.copytree(FIXTURE, m)
        os.remove(m + "/model.safetensors")
        zb = io.BytesIO()
        import zipfile
        with zipfile.ZipFile(zb, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pkl)
            z.writestr("archive/version", "3\n")
        write(m + "/pytorch_model.bin", zb.getvalue())
        run_case("budget/pickle_%s" % name, ["info", "--model_name_or_path", m], expect_ok=False)


def png_file(w, h, bit_depth, color_type, rows, interlace=0):
    """A PNG whose every row (filter byte included) is `rows` bytes of zlib input: zeros compress to almost
    nothing, so a 9459^2 image is a 174 KB file."""
    import zlib
    comp = zlib.compressobj(9)
    row = b"\0" * rows
    data = b"".join(comp.compress(row) for _ in range(h if not interlace else 2 * h)) + comp.flush()
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, interlace)) +
            chunk(b"IDAT", data) + chunk(b"IEND", b""))


def big_images(tmp):
    """Images at the default pixel cap (9459^2), small files that asked for 584-673 MB to decode (issue 25)."""
    side = 9459
    out = {"gray16_png": png_file(side, side, 16, 0, 1 + 2 * side), "rgb_png": png_file(side, side, 8, 2, 1 + 3 * side),
           # Adam7: every pass's rows in one zlib stream; twice h zero rows is more than enough data for its 7 passes.
           "interlaced_gray_png": png_file(side, side, 8, 0, 1 + side, interlace=1)}
    paths = {}
    for name, data in out.items():
        paths[name] = os.path.join(tmp, "big_" + name + ".png")
        write(paths[name], data)
    # Pillow encodes the JPEGs in a process of its own (its 268 MB image never lives in this one).
    code = ("import sys\nfrom PIL import Image\nim = Image.new('RGB', (%d, %d), (120, 60, 30))\n"
            "im.save(sys.argv[1], quality=90, subsampling=0, progressive=True)\n"
            "im.save(sys.argv[2], quality=90, subsampling=0)\n" % (side, side))
    jpegs = [os.path.join(tmp, "big_progressive_444_jpeg.jpg"), os.path.join(tmp, "big_baseline_444_jpeg.jpg")]
    if subprocess.run([sys.executable, "-c", code] + jpegs, capture_output=True).returncode == 0:
        paths["progressive_444_jpeg"], paths["baseline_444_jpeg"] = jpegs
    else:
        print("(no Pillow: the 9459^2 JPEG cases are skipped)")
    return paths


def decode_memory_cases(tmp):
    """Issue 25 class 3: every path that decodes an image stays under 400 MB on images at the pixel cap; those it
    cannot decode within the budget are refused with one line naming the file and --max_image_pixels."""
    model = trained_run(tmp)
    index = os.path.join(tmp, "dm_index")
    run_case("decode_memory/encode a clean index", ["encode", "--model_name_or_path", model, "--data",
                                                    os.path.join(model, "demo_data", "validation"), "--output_dir",
                                                    index], expect_ok=True)
    refused = {"progressive_444_jpeg", "interlaced_gray_png"}  # their decode needs > 2 bytes per allowed pixel
    for name, path in big_images(tmp).items():
        d = os.path.join(tmp, "dm_" + name)
        os.makedirs(d)
        write(d + "/captions.jsonl", json.dumps({"image": path, "caption": "a big image"}) + "\n", "w")
        ok = name not in refused
        kb = len(open(path, "rb").read()) // 1000
        tag = "decode_memory/%s (%d KB)" % (name, kb)
        run_case(tag + " loader", loader(d), expect_ok=ok)
        run_case(tag + " loader dct off", loader(d, "--jpeg_dct_scaling", "false"), expect_ok=ok and "jpeg" not in name)
        run_case(tag + " preprocess", ["preprocess", path, "--out", d + "/x.npy"], expect_ok=ok)
        run_case(tag + " preprocess dct off", ["preprocess", path, "--out", d + "/x.npy", "--jpeg_dct_scaling", "false"],
                 expect_ok=ok and "jpeg" not in name)
        run_case(tag + " preprocess train", ["preprocess", path, "--out", d + "/x.npy", "--transform", "train",
                                             "--sample_seed", "3"], expect_ok=ok)
        run_case(tag + " evaluate", ["evaluate", "--model_name_or_path", model, "--task", "retrieval", "--validation_file",
                                     d, "--output_dir", d + "/eval", "--dataloader_num_workers", "1"], expect_ok=ok)
        run_case(tag + " encode", ["encode", "--model_name_or_path", model, "--data", d, "--output_dir", d + "/index"],
                 expect_ok=ok)
        run_case(tag + " search --query_image", ["search", "--index", index, "--query_image", path], expect_ok=ok)
        if glob.glob(os.path.join(PYTHON_MODULE, "bridgetune", "_native*.so")):  # built with -DBT_PYTHON
            code = "import sys, bridgetune\ntry:\n    bridgetune.preprocess(sys.argv[1])\nexcept RuntimeError as e:\n" \
                   "    sys.exit('error: %s' % e)\n"
            run_case(tag + " python preprocess", None, expect_ok=ok, command=[sys.executable, "-c", code, path])


def model_folder(tmp, name, edit):
    """The trained run's model files (tokenizer included) with its config.json changed by `edit`."""
    src, d = trained_run(tmp), os.path.join(tmp, "ms_" + name)
    os.makedirs(d)
    for f in os.listdir(src):
        if os.path.isfile(os.path.join(src, f)) and not f.endswith((".png", ".jsonl")):
            shutil.copy(os.path.join(src, f), d)
    c = json.load(open(d + "/config.json"))
    edit(c)
    write(d + "/config.json", json.dumps(c), "w")
    return d


def model_size_cases(tmp):
    """Issue 25 class 3: a small config.json inside validate()'s bounds that describes billions of parameters, or an
    image_size of 8192, is refused before anything is allocated (model/memory_budget.h, check_checkpoint_fits,
    the preprocess output budget)."""
    def big(c):
        c.update(hidden_size=4096, num_attention_heads=16, num_hidden_layers=2)
        c["text_config"].update(hidden_size=4096, num_attention_heads=16, num_hidden_layers=12, intermediate_size=8192)
        c["vision_config"].update(hidden_size=1024, num_hidden_layers=12)
    def image_8192(c):
        c["vision_config"]["image_size"] = 8192
    src = trained_run(tmp)
    data = os.path.join(src, "demo_data", "validation")
    batch = os.path.join(FIXTURE, "inputs.safetensors")
    for name, edit in (("2.7e9_parameters", big), ("image_size_8192", image_8192)):
        m = model_folder(tmp, name, edit)
        kb = os.path.getsize(m + "/config.json") / 1000
        tag = "model_size/%s (config %.1f KB)" % (name, kb)
        run_case(tag + " info", ["info", "--model_name_or_path", m], expect_ok=True)
        run_case(tag + " train", ["train", "--model_name_or_path", m, "--train_file", data, "--output_dir",
                                  m + "/run"] + TRAIN_ARGS[:-4], expect_ok=False)
        run_case(tag + " evaluate", ["evaluate", "--model_name_or_path", m, "--task", "retrieval", "--validation_file",
                                     data, "--output_dir", m + "/eval"], expect_ok=False)
        run_case(tag + " encode", ["encode", "--model_name_or_path", m, "--data", data, "--output_dir", m + "/index"],
                 expect_ok=False)
        run_case(tag + " forward", ["forward", "--model_name_or_path", m, "--batch", batch, "--out", m + "/o.st"],
                 expect_ok=False)
        run_case(tag + " preprocess", ["preprocess", GOOD_JPG, "--model_name_or_path", m, "--out", m + "/x.npy"],
                 expect_ok=name != "image_size_8192")
    run_case("model_size/--max_model_bytes below the tiny model forward",
             ["forward", "--model_name_or_path", FIXTURE, "--batch", batch, "--out", os.path.join(tmp, "ms.st"),
              "--max_model_bytes", "1000000"], expect_ok=False)
    run_case("model_size/preprocess --image_size 16384 u8", ["preprocess", GOOD_JPG, "--image_size", "16384", "--format",
                                                            "u8", "--out", os.path.join(tmp, "ms.npy")], expect_ok=False)


def config_cases(tmp):
    base = json.load(open(os.path.join(FIXTURE, "config.json")))
    def variant(**kw):
        c = json.loads(json.dumps(base))
        for k, v in kw.items():
            if "." in k:
                a, b = k.split(".")
                c[a][b] = v
            else:
                c[k] = v
        return json.dumps(c)
    cases = {
        "not_json": "{", "array": "[]", "heads_2^32+4": variant(num_attention_heads=4294967300),
        "layers_1e9": variant(num_hidden_layers=1000000000), "intermediate_-5": variant(**{"text_config.intermediate_size": -5}),
        "num_channels_0": variant(**{"vision_config.num_channels": 0}), "vocab_2e9_float": variant(**{"text_config.vocab_size": 2e9}),
        "vocab_2e9_int": variant(**{"text_config.vocab_size": 2000000000}),
        "huge_combo": variant(hidden_size=16384, num_attention_heads=16, **{"text_config.hidden_size": 16384, "vision_config.hidden_size": 16384}),
        "model_type_bert": variant(model_type="bert"), "text_config_number": variant(**{}).replace('"text_config": {', '"text_config": 3, "x": {', 1),
        "deep_nesting": '{"a": ' + "[" * 100000 + "]" * 100000 + "}", "image_size_0": variant(**{"vision_config.image_size": 0}),
        "escape_in_value": variant(model_type="\u001b[2Jbert"),
    }
    for name, text in cases.items():
        d = os.path.join(tmp, "cfg_" + name)
        shutil.copytree(FIXTURE, d)
        write(d + "/config.json", text, "w")
        run_case("config/%s" % name, ["info", "--model_name_or_path", d], expect_ok=False)


def special_file_cases(tmp):
    """Every file a folder names, replaced by a FIFO (a blocking open would hang) or a link to /dev/zero (an endless
    read): each must fail at once with one line naming it (common/file_gate.h)."""
    def special(path, kind):
        if os.path.exists(path):
            os.remove(path)
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.symlink("/dev/zero", path)
    for name in ["vocab.json", "merges.txt"]:  # a tokenizer folder
        for kind in ("fifo", "dev_zero"):
            d = os.path.join(tmp, "special_tok_%s_%s" % (kind, name))
            shutil.copytree(os.path.join(ROOT, "tests/text/fixtures/tiny"), d)
            special(os.path.join(d, name), kind)
            run_case("special/%s tokenizer %s" % (kind, name), ["tokenize", "--tokenizer_dir", d], expect_ok=False)
    for name in ["config.json", "model.safetensors"]:  # what `info` reads of a model folder
        for kind in ("fifo", "dev_zero"):
            d = os.path.join(tmp, "special_%s_%s" % (kind, name))
            shutil.copytree(FIXTURE, d)
            special(os.path.join(d, name), kind)
            run_case("special/%s %s" % (kind, name), ["info", "--model_name_or_path", d], expect_ok=False)
    fifo = os.path.join(tmp, "special_args.json")
    os.mkfifo(fifo)
    run_case("special/fifo args.json", ["train", fifo], expect_ok=False)
    img = os.path.join(tmp, "special_image.jpg")
    os.symlink("/dev/zero", img)
    run_case("special/dev_zero preprocess image", ["preprocess", img, "--out", os.path.join(tmp, "x.npy")], expect_ok=False)


TRAIN_ARGS = ["--demo", "--max_steps", "2", "--save_steps", "1", "--torch_threads", "1", "--eval_steps", "0",
              "--image_size", "32", "--per_device_train_batch_size", "4"]


def trained_run(tmp):
    """A real run (tiny preset, 2 steps, its demo data): genuine checkpoints, and a model folder with a tokenizer."""
    src = os.path.join(tmp, "ck_src")
    if not os.path.exists(os.path.join(src, "train_results.json")):
        subprocess.run([EXE, "train", "--output_dir", src] + TRAIN_ARGS, capture_output=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    return src


def checkpoint_cases(tmp):
    src = trained_run(tmp)
    args = ["train", "--output_dir", src] + TRAIN_ARGS
    def fresh(name):
        d = os.path.join(tmp, "ck_" + name)
        shutil.copytree(src, d, symlinks=True)
        os.remove(d + "/train_results.json")  # an interrupted run: resuming redoes the last step
        return d
    def resume(name, d, expect_ok):
        a = [x if x != src else d for x in args] + ["--resume_from_checkpoint", "latest"]
        run_case("checkpoint/%s" % name, a, expect_ok=expect_ok)
    d = fresh("none"); [shutil.rmtree(os.path.join(d, c)) for c in os.listdir(d) if c.startswith("checkpoint-")]
    resume("no_checkpoints", d, False)
    d = fresh("newest_no_state"); os.remove(d + "/checkpoint-2/bridgetune_state.json"); resume("newest_no_state_falls_back", d, True)
    d = fresh("newest_torn_state"); write(d + "/checkpoint-2/bridgetune_state.json", b'{"global_step": '); resume("newest_torn_state_falls_back", d, True)
    d = fresh("newest_bad_safetensors"); write(d + "/checkpoint-2/model.safetensors", b"\xff" * 16); resume("newest_bad_safetensors_falls_back", d, True)
    d = fresh("all_bad"); [os.remove(os.path.join(d, c, "bridgetune_state.json")) for c in os.listdir(d) if c.startswith("checkpoint-")]
    resume("all_incomplete", d, False)
    d = fresh("old_leftover"); os.rename(d + "/checkpoint-2", d + "/.old-checkpoint-2.99"); resume("old_leftover_restored", d, True)
    d = fresh("hostile_config"); write(d + "/checkpoint-2/config.json", b'{"num_attention_heads": 4294967300}'); resume("hostile_config", d, False)
    d = fresh("optimizer_missing"); os.remove(d + "/checkpoint-2/optimizer.safetensors"); resume("optimizer_missing", d, False)
    # Issue 25 class 8: links that loop or lead nowhere are named in one line, and never block a resume.
    d = fresh("link_loop_newest"); os.symlink("checkpoint-3", d + "/checkpoint-3"); resume("link_loop_newest_skipped", d, True)
    d = fresh("link_loop_pair"); os.symlink("checkpoint-4", d + "/checkpoint-3"); os.symlink("checkpoint-3", d + "/checkpoint-4")
    resume("link_loop_pair_skipped", d, True)
    d = fresh("link_dangling"); os.symlink("nowhere", d + "/checkpoint-5"); resume("link_dangling_skipped", d, True)
    d = fresh("link_loop_only"); [shutil.rmtree(os.path.join(d, c)) for c in os.listdir(d) if c.startswith("checkpoint-")]
    os.symlink("checkpoint-3", d + "/checkpoint-3"); resume("link_loop_only_checkpoint", d, False)
    d = fresh("link_loop_named"); os.symlink("checkpoint-3", d + "/checkpoint-3")
    run_case("checkpoint/link_loop_named_explicitly", [x if x != src else d for x in args] +
             ["--resume_from_checkpoint", d + "/checkpoint-3"], expect_ok=False)


def output_dir_cases(tmp):
    """--output_dir as a link to nothing, a link loop, or below one: one line naming it, for every command."""
    model = trained_run(tmp)
    dirs = {}
    dirs["dangling_link"] = os.path.join(tmp, "out_dangling")
    os.symlink(os.path.join(tmp, "nowhere", "deeper"), dirs["dangling_link"])
    dirs["link_loop"] = os.path.join(tmp, "out_loop")
    os.symlink(dirs["link_loop"], dirs["link_loop"])
    dirs["below_dangling_link"] = os.path.join(dirs["dangling_link"], "sub")
    dirs["below_link_loop"] = os.path.join(dirs["link_loop"], "sub")
    data = os.path.join(model, "demo_data", "validation")
    for name, out in dirs.items():
        run_case("output_dir/%s train" % name, ["train", "--output_dir", out] + TRAIN_ARGS, expect_ok=False)
        run_case("output_dir/%s evaluate" % name, ["evaluate", "--model_name_or_path", model, "--task", "retrieval",
                                                     "--validation_file", data, "--output_dir", out], expect_ok=False)
    run_case("output_dir/link_loop encode", ["encode", "--model_name_or_path", model, "--data", data, "--output_dir",
                                             dirs["link_loop"]], expect_ok=False)


def main():
    if not os.path.exists(EXE):
        sys.exit("no %s: build first" % EXE)
    tmp = tempfile.mkdtemp(prefix="bt_hostile_")
    try:
        only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
        for group in (image_cases, captions_file_cases, tar_cases, parquet_cases, budget_cases, config_cases,
                      special_file_cases, checkpoint_cases, output_dir_cases, decode_memory_cases, model_size_cases):
            if only is None or group.__name__[: -len("_cases")] in only:
                group(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = [r for r in results if r[1]]
    kinds = {k: sum(1 for r in results for p in r[1] if p.startswith(k))
             for k in ("crash", "hang", "rss", "raw", "echoed", "backtrace", "line over", "not one", "expected", "exit")}
    print("\n%d runs: %d crashes, %d hangs, %d over 400 MB (unbounded allocations), %d raw control bytes, "
          "%d echoed contents, %d backtraces, %d lines over 2 KB, %d messy errors, %d unexpected outcomes; "
          "slowest %.1f s, largest peak RSS %d MB"
          % (len(results), kinds["crash"], kinds["hang"], kinds["rss"], kinds["raw"], kinds["echoed"],
             kinds["backtrace"], kinds["line over"], kinds["not one"], kinds["expected"] + kinds["exit"],
             max(r[2] for r in results), max(r[3] for r in results)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
