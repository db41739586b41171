#!/usr/bin/env python3
"""Python peer for the GPU check: what a Hugging Face user runs to fine-tune BridgeTower contrastively.

HF `BridgeTowerForContrastiveLearning`, random init from a BridgeTowerConfig with the shapes of
BridgeTower/bridgetower-large-itm-mlm-itc (RoBERTa-large text tower, CLIP ViT-L/14 @294 vision tower,
6 cross-modal layers), AdamW (HF Trainer's default lr 5e-5), bf16 autocast, batch 48, fed by a torch
DataLoader with PIL + torchvision transforms as in the reference example (Resize(294, BICUBIC) ->
CenterCrop -> ToTensor -> Normalize(CLIP)). Captions are tokenised in the collate function with the
RoBERTa tokenizer when it is in the local HF cache (no network on the GPU machine), else with a
whitespace-hash stand-in of the same output shape (noted in the JSON as "tokenizer").

For each --workers value: warm-up steps, then timed steps (torch.cuda.synchronize at both ends);
samples/s = batch * steps / seconds. Also "model_only": the same step on a batch already on the GPU
(the ceiling any loader can reach). Prints one JSON line per run and writes them all to --out.

  python3 bench/gpu/peer_train.py --data DIR --workers 0 1 2 8 --out peer.jsonl
"""
import argparse
import json
import os
import time
import zlib

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, RandomSampler
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode

MEAN = [0.48145466, 0.4578275, 0.40821073]
STD = [0.26862954, 0.26130258, 0.27577711]
MAX_LEN = 40


def large_config():
    from transformers import BridgeTowerConfig
    text = dict(vocab_size=50265, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                intermediate_size=4096, max_position_embeddings=514)
    vision = dict(hidden_size=1024, num_hidden_layers=24, patch_size=14, image_size=294)
    return BridgeTowerConfig(text_config=text, vision_config=vision, hidden_size=1024, num_attention_heads=16,
                             num_hidden_layers=6, share_cross_modal_transformer_layers=True,
                             share_link_tower_layers=False, link_tower_type="add",
                             contrastive_hidden_size=512, logit_scale_init_value=2.6592)


def make_tokenizer():
    try:
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("roberta-base", local_files_only=True)
        return "roberta", lambda caps: tok(caps, padding="max_length", truncation=True, max_length=MAX_LEN,
                                             return_tensors="pt")
    except Exception:  # noqa: BLE001  (offline machine without the HF cache)
        def hash_tok(caps):
            ids = torch.ones(len(caps), MAX_LEN, dtype=torch.long)
            mask = torch.zeros(len(caps), MAX_LEN, dtype=torch.long)
            for i, c in enumerate(caps):
                words = [0] + [3 + zlib.crc32(w.encode()) % 50000 for w in c.split()][:MAX_LEN - 2] + [2]
                ids[i, :len(words)] = torch.tensor(words)
                mask[i, :len(words)] = 1
            return {"input_ids": ids, "attention_mask": mask}
        return "hash-standin", hash_tok


class Captions(Dataset):
    def __init__(self, root, size):
        self.items = []
        with open(os.path.join(root, "captions.jsonl")) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    self.items.append((os.path.join(root, r["image"]), r["caption"]))
        self.tf = T.Compose([T.Resize(size, interpolation=InterpolationMode.BICUBIC), T.CenterCrop(size),
                             T.ToTensor(), T.Normalize(MEAN, STD)])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, caption = self.items[i]
        return self.tf(Image.open(path).convert("RGB")), caption


class Collate:
    def __init__(self, tok):
        self.tok = tok

    def __call__(self, batch):
        enc = self.tok([b[1] for b in batch])
        return {"pixel_values": torch.stack([b[0] for b in batch]), "input_ids": enc["input_ids"],
                "attention_mask": enc["attention_mask"]}


def step(model, opt, batch):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                    pixel_values=batch["pixel_values"], return_loss=True)
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return out.loss


def to_gpu(b):
    return {k: v.cuda(non_blocking=True) for k, v in b.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2, 8])
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--size", type=int, default=294)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import transformers
    from transformers import BridgeTowerForContrastiveLearning
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    t = time.perf_counter()
    with torch.device("cuda"):
        model = BridgeTowerForContrastiveLearning(large_config())
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
    init_s = time.perf_counter() - t
    params = sum(p.numel() for p in model.parameters())
    tok_name, tok = make_tokenizer()
    ds = Captions(args.data, args.size)
    common = {"peer": "HF BridgeTowerForContrastiveLearning", "preset": "large", "batch": args.batch,
              "image_size": args.size, "bf16_autocast": True, "tokenizer": tok_name, "params": params,
              "torch": torch.__version__, "transformers": transformers.__version__,
              "gpu": torch.cuda.get_device_name(0), "init_s": round(init_s, 1)}
    results = []

    def emit(r):
        r = {**common, **r}
        print(json.dumps(r), flush=True)
        results.append(r)
        if args.out:
            with open(args.out, "w") as f:
                f.write("".join(json.dumps(x) + "\n" for x in results))

    # Ceiling: one fixed batch already on the GPU.
    first = Collate(tok)([ds[i % len(ds)] for i in range(args.batch)])
    gb = to_gpu(first)
    for _ in range(args.warmup):
        step(model, opt, gb)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step(model, opt, gb)
    torch.cuda.synchronize()
    el = time.perf_counter() - t0
    emit({"loader": "model_only", "workers": None, "samples_per_s": round(args.batch * args.steps / el, 2),
          "step_ms": round(1000 * el / args.steps, 1), "loss": float(loss),
          "max_mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 1)})

    for w in args.workers:
        g = torch.Generator()
        g.manual_seed(0)
        n = (args.warmup + args.steps) * args.batch
        dl = DataLoader(ds, batch_size=args.batch, sampler=RandomSampler(ds, num_samples=n, generator=g),
                        num_workers=w, collate_fn=Collate(tok), pin_memory=True, drop_last=True)
        it = iter(dl)
        for _ in range(args.warmup):
            step(model, opt, to_gpu(next(it)))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            loss = step(model, opt, to_gpu(next(it)))
        torch.cuda.synchronize()
        el = time.perf_counter() - t0
        del it, dl
        emit({"loader": "torch DataLoader + PIL", "workers": w,
              "samples_per_s": round(args.batch * args.steps / el, 2), "step_ms": round(1000 * el / args.steps, 1),
              "loss": float(loss)})


if __name__ == "__main__":
    main()
