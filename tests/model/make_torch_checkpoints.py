#!/usr/bin/python3
"""Writes the pytorch_model.bin fixtures with the real torch.save (Debian's python3-torch), at test time.

usage: make_torch_checkpoints.py <bridgetower-tiny fixture dir> <tokenizer dir> <out dir>

out/hub/models--bt-test--tiny-bin/         refs/main -> snapshots/<commit>/: config.json (architectures names the
                                           ITM class), pytorch_model.bin with the reference weights plus ITM/MLM heads
                                           and a position_ids buffer, one weight stored non-contiguous (transposed
                                           view), two weights sharing one storage (the second at an offset), one in
                                           float64; tokenizer.json + vocab.json (no merges.txt, as the official
                                           repos); preprocessor_config.json
out/hub/models--bt-test--tiny-sharded/     the same weights in two shards + pytorch_model.bin.index.json
out/hub/models--bt-test--tiny-bigvocab/    tiny-bin with a tokenizer of 1001 ids (one past the embedding table)
out/hub/models--bt-test--tiny-base/        backbone only (no itc heads, bare names as BridgeTowerModel saves them)
out/dtypes.bin, out/dtypes.safetensors     f32/f16/bf16/f64/int64 tensors (strided, shared, offset) and the same
                                           values written contiguous in safetensors
out/good_handmade.bin, good_zip64.bin      a hand-pickled archive, and the same with zip64 sizes and offsets
out/bad_*.bin                              malformed archives
"""
import collections, json, os, pickle, shutil, struct, sys, zipfile

import numpy as np
import torch

COMMIT = "1234567890abcdef1234567890abcdef12345678"


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = collections.OrderedDict()
    for name, v in header.items():
        if name == "__metadata__":
            continue
        assert v["dtype"] == "F32", v
        b, e = v["data_offsets"]
        a = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(v["shape"])
        out[name] = torch.from_numpy(a.copy())
    return out


def write_safetensors(path, tensors):
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
             torch.int64: "I64"}
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        t = t.contiguous()
        data = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def snapshot(out, repo):
    d = os.path.join(out, "hub", "models--bt-test--" + repo)
    os.makedirs(os.path.join(d, "refs"), exist_ok=True)
    with open(os.path.join(d, "refs", "main"), "w") as f:
        f.write(COMMIT)
    s = os.path.join(d, "snapshots", COMMIT)
    os.makedirs(s, exist_ok=True)
    return s


def with_layout_tricks(sd):
    """Same values; a transposed (non-contiguous) view, two tensors sharing one storage, one float64."""
    sd = collections.OrderedDict(sd)
    mats = [k for k, v in sd.items() if v.dim() == 2 and v.shape[0] != v.shape[1]]
    k = mats[0]
    sd[k] = sd[k].t().contiguous().t()
    assert not sd[k].is_contiguous()
    a, b = [k for k, v in sd.items() if v.dim() == 1][:2]
    flat = torch.cat([sd[a].flatten(), sd[b].flatten()])
    sd[a] = flat[:sd[a].numel()].view(sd[a].shape)
    sd[b] = flat[sd[a].numel():].view(sd[b].shape)
    assert sd[b].storage_offset() > 0
    c = [k for k, v in sd.items() if v.dim() == 2][-1]
    sd[c] = sd[c].double()
    return sd


def tokenizer_json(tok):
    """RoBERTa's tokenizer.json layout (what the official BridgeTower repos ship instead of merges.txt)."""
    vocab = json.load(open(os.path.join(tok, "vocab.json")))
    merges = [l.rstrip("\n") for l in open(os.path.join(tok, "merges.txt"), encoding="utf-8")
              if l.strip() and not l.startswith("#version")]
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": t == "<mask>", "rstrip": False,
              "normalized": False, "special": True} for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                               "trim_offsets": True, "add_prefix_space": False},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                      "merges": merges}}


def model_fixtures(fixture, tok, out):
    sd = read_safetensors(os.path.join(fixture, "model.safetensors"))
    cfg = json.load(open(os.path.join(fixture, "config.json")))
    cfg["architectures"] = ["BridgeTowerForImageAndTextRetrieval"]
    h = cfg["hidden_size"]
    g = torch.Generator().manual_seed(0)
    extra = collections.OrderedDict()
    extra["itm_score.fc.weight"] = torch.randn(2, 2 * h, generator=g)
    extra["itm_score.fc.bias"] = torch.zeros(2)
    extra["mlm_score.transform.dense.weight"] = torch.randn(h, h, generator=g)
    extra["bridgetower.text_model.embeddings.position_ids"] = torch.arange(64).unsqueeze(0)
    full = with_layout_tricks(sd)
    full.update(extra)

    def put_model_files(d, config):
        """config.json, preprocessor_config.json and, as the official repos, tokenizer.json + vocab.json (no merges)."""
        json.dump(config, open(os.path.join(d, "config.json"), "w"), indent=2)
        json.dump({"image_processor_type": "BridgeTowerImageProcessor", "size": cfg["vision_config"]["image_size"],
                   "size_divisor": 32, "do_center_crop": True, "image_mean": [0.48145466, 0.4578275, 0.40821073],
                   "image_std": [0.26862954, 0.26130258, 0.27577711]},
                  open(os.path.join(d, "preprocessor_config.json"), "w"))
        shutil.copy(os.path.join(tok, "vocab.json"), d)
        json.dump(tokenizer_json(tok), open(os.path.join(d, "tokenizer.json"), "w"))

    d = snapshot(out, "tiny-bin")
    put_model_files(d, cfg)
    torch.save(full, os.path.join(d, "pytorch_model.bin"))

    d = snapshot(out, "tiny-sharded")
    put_model_files(d, cfg)
    names = list(full.keys())
    shards = {"pytorch_model-00001-of-00002.bin": names[:len(names) // 2],
              "pytorch_model-00002-of-00002.bin": names[len(names) // 2:]}
    for f, keys in shards.items():
        torch.save(collections.OrderedDict((k, full[k]) for k in keys), os.path.join(d, f))
    index = {"metadata": {}, "weight_map": {k: f for f, ks in shards.items() for k in ks}}
    json.dump(index, open(os.path.join(d, "pytorch_model.bin.index.json"), "w"))

    d = snapshot(out, "tiny-bigvocab")  # a tokenizer with ids past the 1000-row embedding table
    put_model_files(d, cfg)
    vocab = json.load(open(os.path.join(tok, "vocab.json")))
    vocab.update({"tok%d" % i: i for i in range(len(vocab), cfg["text_config"]["vocab_size"] + 1)})
    tj = tokenizer_json(tok)
    tj["model"]["vocab"] = vocab
    json.dump(tj, open(os.path.join(d, "tokenizer.json"), "w"))
    torch.save(full, os.path.join(d, "pytorch_model.bin"))

    d = snapshot(out, "tiny-base")
    cfg["architectures"] = ["BridgeTowerModel"]
    put_model_files(d, cfg)
    base = collections.OrderedDict((k[len("bridgetower."):], v) for k, v in sd.items() if k.startswith("bridgetower."))
    torch.save(base, os.path.join(d, "pytorch_model.bin"))


def dtype_fixtures(out):
    g = torch.Generator().manual_seed(1)
    big = torch.randn(6, 10, generator=g)
    t = collections.OrderedDict()
    t["f32_strided"] = big[:, ::3]                     # strides (10, 3)
    t["f32_shared_a"] = big[1]                         # shares big's storage, offset 10
    t["f16"] = torch.randn(3, 4, generator=g).half().t()
    t["bf16"] = torch.randn(5, generator=g).bfloat16()
    t["f64"] = torch.randn(2, 3, generator=g).double()
    t["i64"] = torch.arange(7) * 3 - 5
    t["scalar"] = torch.tensor(2.5)
    t["empty"] = torch.zeros(0, 4)
    torch.save(t, os.path.join(out, "dtypes.bin"))
    write_safetensors(os.path.join(out, "dtypes.safetensors"), t)


class Call:
    """Pickles as fn(*args): how a hostile pickle names a global."""
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class Storage:
    pass


class TorchLikePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", torch.FloatStorage, "0", "cpu", 4)
        return None


def write_archive(path, obj, storage_bytes=16, duplicate_storage=False):
    buf = __import__("io").BytesIO()
    TorchLikePickler(buf, protocol=2).dump(obj)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/data/0", b"\0" * storage_bytes)
        if duplicate_storage:  # a tampered archive: torch.load reads the first copy, a name->entry map the last
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                z.writestr("archive/data/0", b"\xff" * storage_bytes)
        z.writestr("archive/version", "3\n")


def rewrite_as_zip64(src, dst):
    """The same entries with every size and offset in zip64 extra fields (as archives past 4 GB carry them)."""
    import zlib
    entries = [(i.filename, zipfile.ZipFile(src).read(i.filename)) for i in zipfile.ZipFile(src).infolist()]
    body, central = b"", b""
    for name, data in entries:
        n = name.encode()
        offset = len(body)
        crc = zlib.crc32(data)
        body += struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(n), 20)
        body += n + struct.pack("<HHQQ", 1, 16, len(data), len(data)) + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                               len(n), 28, 0, 0, 0, 0, 0xFFFFFFFF)
        central += n + struct.pack("<HHQQQ", 1, 24, len(data), len(data), offset)
    cd_offset = len(body)
    eocd64_offset = cd_offset + len(central)
    tail = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(entries), len(entries), len(central), cd_offset)
    tail += struct.pack("<IIQI", 0x07064b50, 0, eocd64_offset, 1)
    tail += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(dst, "wb") as f:
        f.write(body + central + tail)


def bad_fixtures(out):
    import builtins
    rebuild = torch._utils._rebuild_tensor_v2
    raw = open(os.path.join(out, "dtypes.bin"), "rb").read()
    open(os.path.join(out, "bad_truncated.bin"), "wb").write(raw[:len(raw) * 2 // 3])
    write_archive(os.path.join(out, "bad_os_system.bin"), {"w": Call(os.system, ("echo pwned",))})
    write_archive(os.path.join(out, "bad_eval.bin"), {"w": Call(builtins.eval, ("1+1",))})
    hooks = collections.OrderedDict()
    write_archive(os.path.join(out, "bad_short_storage.bin"),
                  {"w": Call(rebuild, (Storage(), 0, (1000,), (1,), False, hooks))})
    write_archive(os.path.join(out, "bad_absurd_shape.bin"),
                  {"w": Call(rebuild, (Storage(), 0, (1 << 40, 1 << 40), (1 << 40, 1), False, hooks))})
    write_archive(os.path.join(out, "good_handmade.bin"),
                  {"w": Call(rebuild, (Storage(), 1, (3,), (1,), False, hooks))})
    rewrite_as_zip64(os.path.join(out, "good_handmade.bin"), os.path.join(out, "good_zip64.bin"))
    write_archive(os.path.join(out, "bad_duplicate_entry.bin"),
                  {"w": Call(rebuild, (Storage(), 0, (3,), (1,), False, hooks))}, duplicate_storage=True)


def main():
    fixture, tok, out = sys.argv[1:4]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    model_fixtures(fixture, tok, out)
    dtype_fixtures(out)
    bad_fixtures(out)


if __name__ == "__main__":
    main()
