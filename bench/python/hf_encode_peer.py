#!/usr/bin/python3
"""The HF transformers peer of `bridgetune encode`'s image side: BridgeTowerForContrastiveLearning loaded from a
bridgetune output folder, images through a torch DataLoader + PIL + torchvision (Resize(BICUBIC), CenterCrop,
ToTensor, Normalize: the HF example's transforms), and the image half of the model's contrastive forward
(get_image_features-style: vision tower, forward_post, the image token type, itc_image_head, L2 norm -- what
modeling_bridgetower.py computes for `image_embeds`). Run by bench/python/encode_hf_bench.py with transformers on
PYTHONPATH (../shared/reference/setup_hf_reference.sh); never by the README's commands or CI.

    python3 hf_encode_peer.py MODEL_DIR DATA_DIR --batch 16 --workers 2 [--threads N] [--bf16] [--out EMBEDS.npy]

--bf16: the forward under torch.autocast("cpu", torch.bfloat16), as an HF user would run it.

Prints one JSON line: images, seconds, images_per_s (model loading excluded; the DataLoader's start included, as
encode's clock includes its loader's).
"""
import argparse
import json
import os
import struct
import time

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image
from transformers import BridgeTowerConfig, BridgeTowerForContrastiveLearning

MEAN = (0.48145466, 0.4578275, 0.40821073)  # preprocessor_config.json of BridgeTower (OpenAI CLIP's)
STD = (0.26862954, 0.26130258, 0.27577711)
DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "BF16": None}


def read_safetensors(path):
    """model.safetensors as a state dict (the safetensors package is a stub in the reference setup)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    sd = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        if t["dtype"] == "BF16":
            raw = np.frombuffer(body[a:b], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(body[a:b], dtype=DTYPES[t["dtype"]])
        sd[name] = torch.from_numpy(arr.copy().reshape(t["shape"]))
    return sd


class Images(torch.utils.data.Dataset):
    def __init__(self, data_dir, size):
        keys = []
        with open(os.path.join(data_dir, "captions.jsonl")) as f:
            for line in f:
                k = json.loads(line)["image"]
                if k not in keys:
                    keys.append(k)
        self.paths = [os.path.join(data_dir, k) for k in keys]
        self.keys = keys
        self.tf = T.Compose([T.Resize(size, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(size),
                             T.ToTensor(), T.Normalize(MEAN, STD)])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with Image.open(self.paths[i]) as im:
            return self.tf(im.convert("RGB"))


@torch.inference_mode()
def image_features(model, pixels):
    bt = model.bridgetower
    v = bt.vision_model.visual
    x = v.forward_pre(pixels.type(bt.vision_model.dtype))
    for block in v.transformer.resblocks:
        x = block(x)
    x = v.forward_post(x)
    tt = bt.token_type_embeddings(torch.full((1,), 1, dtype=torch.long)).expand_as(x)
    x = bt.cross_modal_image_transform(x) + tt
    return torch.nn.functional.normalize(model.itc_image_head(x[:, 0, :]), dim=-1, p=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast")
    ap.add_argument("--out", default="", help="write the embeddings here (.npy, rows in images.jsonl order)")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    cfg = BridgeTowerConfig.from_pretrained(a.model)
    model = BridgeTowerForContrastiveLearning(cfg)
    missing, unexpected = model.load_state_dict(read_safetensors(os.path.join(a.model, "model.safetensors")),
                                                strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]  # buffers, persistent only in v4.30
    if missing or unexpected:
        raise SystemExit(f"state dict mismatch: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.eval()
    ds = Images(a.data, cfg.vision_config.image_size)
    t0 = time.perf_counter()
    loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, num_workers=a.workers)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
        out = [image_features(model, px).float() for px in loader]
    seconds = time.perf_counter() - t0
    emb = torch.cat(out).numpy()
    if a.out:
        np.save(a.out, emb)
        with open(os.path.splitext(a.out)[0] + ".keys.json", "w") as f:
            json.dump(ds.keys, f)
    print(json.dumps({"images": len(ds), "seconds": seconds, "images_per_s": len(ds) / seconds,
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
