#!/usr/bin/env python3
"""Python peer for the GPU check: what a Hugging Face user runs to fine-tune BridgeTower contrastively.

Model: HF `BridgeTowerForContrastiveLearning`, random init from a BridgeTowerConfig with the shapes of
BridgeTower/bridgetower-large-itm-mlm-itc (RoBERTa-large text tower, CLIP ViT-L/14 @294 vision tower, 6
cross-modal layers; --preset tiny: bridgetune's tiny shapes, for a CPU smoke test). Parameters in fp32, forward
under bf16 autocast, fused AdamW (lr 5e-5, no weight decay), linear LR schedule, grad-norm clip 1.0 and a per-step
NaN/Inf check of the loss (a host sync), as HF Trainer does with --bf16 and its defaults.

Data, per sample on the CPU, as the HF contrastive-image-text examples do it (run_clip.py, Optimum Habana's
run_bridgetower.py): decode, Resize(image_size, BICUBIC), CenterCrop, to float, Normalize(CLIP mean/std), in a
torch Dataset batched by a torch DataLoader (pin_memory on CUDA). Default (--decode pil): PIL open +
convert("RGB"), Resize and CenterCrop on the PIL image, then ToTensor + Normalize (torchvision's classic recipe;
run_bridgetower.py turns PIL images into float tensors first and resizes those). --decode tvio:
torchvision.io.read_image + the transforms on uint8 tensors (both examples' path for image files). Captions are
tokenised in the collate function (the examples tokenise up front with dataset.map), truncated to --max_length and
padded to the batch's longest row (bridgetune's padding; --padding max_length: the examples').
Tokenizer: a RoBERTa-style byte-level BPE built from the GPT-2 vocab/merges this repository ships
(tests/text/fixtures/gpt2): transformers' RobertaTokenizer when it builds, else a bare tokenizers.Tokenizer with
the same pipeline, else a pure-Python BPE; each candidate must reproduce the pure-Python BPE on a few texts
before it is used, and the JSON says which one ran ("tokenizer", "tokenizer_notes").

Runs: "model_only" (one fixed batch already on the device: the ceiling any loader can reach), then one run per
--workers value, all on one model built once. Each: warm-up steps, then timed steps between device
synchronisations; samples_per_s = batch * steps / seconds; loader_wait_pct = share of that time spent blocked in
next(loader) (the GPU idles then, the step having synced). A run that no longer fits --budget_s (counted from the
process start) is skipped and a run that fails is recorded, both as lines with samples_per_s null; one JSON line
per run on stdout and in --out (rewritten after every run, so a kill keeps what finished). Exit status 1 if any
run failed. --loader_only times the DataLoader alone (no model, no transformers import).

  python3 bench/gpu/train_peer.py --data DIR --workers 0 1 2 8 --out peer.jsonl
  python3 bench/gpu/train_peer.py --data DIR --device cpu --preset tiny --batch 4 --workers 0 2 --warmup 1 --steps 2
"""
import time

T_START = time.monotonic()  # the budget counts from here (imports included)

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

# The collate function tokenises in the main process (workers=0) and in forked workers; a Rust tokenizer that
# used its thread pool before a fork warns and disables it in the child anyway. Decide once, up front.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def fatal_line(error):
    """The one JSON line of a peer that cannot even start (stdout, and --out when given): never silence."""
    line = json.dumps({"peer": "HF BridgeTowerForContrastiveLearning", "loader": "setup", "workers": None,
                       "samples_per_s": None, "step_ms": None, "error": error,
                       "python": platform.python_version()})
    print(line, flush=True)
    if "--out" in sys.argv[:-1]:
        try:
            with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
                f.write(line + "\n")
        except OSError:
            pass


try:
    import torch  # noqa: E402
    from PIL import Image  # noqa: E402
    from torch.utils.data import DataLoader, Dataset, RandomSampler  # noqa: E402

    from peer_tokenizer import load_roberta_style_vocab, make_tokenizer  # noqa: E402
except ImportError as e:
    fatal_line(f"cannot import {e.name or e}: the peer needs torch, Pillow and bench/gpu/peer_tokenizer.py ({e!r})")
    sys.exit(1)

CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

# ----------------------------------------------------------------------------------------------------------------
# Model shapes


def preset_config(name):
    """BridgeTowerConfig kwargs: 'large' = bridgetower-large-itm-mlm-itc's shapes, 'tiny' = bridgetune's tiny."""
    if name == "large":
        text = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        vision = dict(hidden_size=1024, num_hidden_layers=24, patch_size=14, image_size=294)
        top = dict(hidden_size=1024, num_attention_heads=16, num_hidden_layers=6, contrastive_hidden_size=512)
    elif name == "tiny":
        text = dict(hidden_size=64, num_hidden_layers=3, num_attention_heads=4, intermediate_size=128)
        vision = dict(hidden_size=64, num_hidden_layers=3, patch_size=16, image_size=64)
        top = dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=2, contrastive_hidden_size=32)
    else:
        raise SystemExit(f"--preset: unknown '{name}' (large or tiny)")
    text.update(vocab_size=50265, max_position_embeddings=514, initializer_factor=1)
    vision.update(initializer_factor=1)
    top.update(share_cross_modal_transformer_layers=True, share_link_tower_layers=False, link_tower_type="add",
               logit_scale_init_value=2.6592, initializer_factor=1, text_config=text, vision_config=vision)
    return top


def build_config(kw):
    from transformers import BridgeTowerConfig
    cfg = BridgeTowerConfig(**kw)
    # contrastive_hidden_size / logit_scale_init_value are not declared fields of BridgeTowerConfig (v4 keeps
    # unknown kwargs as attributes, v5's dataclass config passes them to __post_init__, which sets them); make
    # sure they are there whatever the version does, since BridgeTowerForContrastiveLearning reads them.
    for k in ("contrastive_hidden_size", "logit_scale_init_value", "initializer_factor"):
        if getattr(cfg, k, None) != kw[k]:
            setattr(cfg, k, kw[k])
    return cfg


def build_model(cfg, device):
    from transformers import BridgeTowerForContrastiveLearning
    torch.manual_seed(0)
    how = "cpu init, then .to(device)"
    model = None
    if device.type == "cuda":
        try:  # initialise straight on the GPU (seconds instead of a slow CPU init of ~0.9 B parameters)
            with torch.device(device):
                model = BridgeTowerForContrastiveLearning(cfg)
            how = "built under torch.device(cuda)"
        except Exception as e:  # noqa: BLE001
            print(f"[peer] building under torch.device failed ({e!r}); building on the CPU", file=sys.stderr)
            model = None
            gc.collect()
            torch.cuda.empty_cache()
    if model is None:
        model = BridgeTowerForContrastiveLearning(cfg)
    model.to(device)  # also catches anything the device context did not place
    model.train()
    return model, how


# ----------------------------------------------------------------------------------------------------------------
# Images


class PilTransform:
    """Without torchvision: the same recipe on the PIL image by hand (torchvision's Resize(size) output size and
    CenterCrop offsets, bicubic), then CHW float / 255 and Normalize; numpy for the array when present."""

    def __init__(self, size):
        self.size = size
        self.mean = torch.tensor(CLIP_MEAN).view(3, 1, 1)
        self.std = torch.tensor(CLIP_STD).view(3, 1, 1)

    def __call__(self, im):
        w, h = im.size
        s = self.size
        if w <= h:
            ow, oh = s, int(s * h / w)
        else:
            ow, oh = int(s * w / h), s
        im = im.resize((ow, oh), Image.BICUBIC)
        left, top = int(round((ow - s) / 2.0)), int(round((oh - s) / 2.0))
        im = im.crop((left, top, left + s, top + s))
        try:
            import numpy as np
            t = torch.from_numpy(np.asarray(im, dtype=np.uint8).copy())
        except ImportError:
            t = torch.frombuffer(bytearray(im.tobytes()), dtype=torch.uint8).view(s, s, 3)
        t = t.permute(2, 0, 1).float().div(255.0)
        return (t - self.mean) / self.std


def make_transform(size, decode):
    """The per-sample CPU transform, torchvision v1 API as the HF examples use it (v2 if v1 is gone; PIL alone
    without torchvision)."""
    try:
        import torchvision  # noqa: F401
    except ImportError:
        return PilTransform(size), "PIL only (torchvision not installed)"
    try:
        from torchvision import transforms as T
        from torchvision.transforms import InterpolationMode
        if decode == "pil":
            tf = T.Compose([T.Resize(size, interpolation=InterpolationMode.BICUBIC), T.CenterCrop(size),
                            T.ToTensor(), T.Normalize(CLIP_MEAN, CLIP_STD)])
        else:  # run_clip.py's Transform on uint8 CHW tensors (antialias: torchvision >= 0.17's default)
            tf = T.Compose([T.Resize([size], interpolation=InterpolationMode.BICUBIC, antialias=True),
                            T.CenterCrop(size), T.ConvertImageDtype(torch.float), T.Normalize(CLIP_MEAN, CLIP_STD)])
        return tf, "torchvision.transforms (v1)"
    except (ImportError, AttributeError):
        from torchvision.transforms import InterpolationMode, v2
        head = [v2.ToImage()] if decode == "pil" else []
        tf = v2.Compose([v2.Resize(size, interpolation=InterpolationMode.BICUBIC, antialias=True), v2.CenterCrop(size)]
                        + head + [v2.ToDtype(torch.float32, scale=True), v2.Normalize(CLIP_MEAN, CLIP_STD)])
        return tf, "torchvision.transforms.v2"


def read_tvio(path):
    from torchvision.io import ImageReadMode, read_image
    return read_image(path, mode=ImageReadMode.RGB)


def read_pil(path):
    with Image.open(path) as im:
        return im.convert("RGB")


class Captions(Dataset):
    """captions.jsonl rows {"image": relative path, "caption": text} -> (normalised CHW float tensor, caption)."""

    def __init__(self, root, size, decode):
        self.items = []
        with open(os.path.join(root, "captions.jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    self.items.append((os.path.join(root, r["image"]), r["caption"]))
        if not self.items:
            raise ValueError(f"{root}/captions.jsonl has no rows")
        self.tf, self.tf_api = make_transform(size, decode)
        if decode != "pil" and isinstance(self.tf, PilTransform):
            decode = "pil"  # torchvision.io needs torchvision: PIL decodes instead (tf_api says so)
        self.read = read_pil if decode == "pil" else read_tvio

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, caption = self.items[i]
        return self.tf(self.read(path)), caption


class Collate:
    def __init__(self, tok):
        self.tok = tok

    def __call__(self, batch):
        enc = self.tok([b[1] for b in batch])
        return {"pixel_values": torch.stack([b[0] for b in batch]), "input_ids": enc["input_ids"],
                "attention_mask": enc["attention_mask"]}


# ----------------------------------------------------------------------------------------------------------------
# Training step and runs


def set_tf32():
    """Let fp32 matmuls/convs that autocast leaves in fp32 use TF32 (new API from torch 2.9, old one before)."""
    try:
        if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
            torch.backends.cuda.matmul.fp32_precision = "tf32"
            torch.backends.cudnn.conv.fp32_precision = "tf32"
            return "fp32_precision=tf32"
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return "allow_tf32"
    except Exception as e:  # noqa: BLE001
        return f"not set ({e!r})"


def make_optimizer(params, lr, device):
    kw = dict(lr=lr, weight_decay=0.0)  # HF TrainingArguments defaults: lr 5e-5, weight_decay 0, adamw_torch_fused
    if device.type == "cuda":
        try:
            return torch.optim.AdamW(params, fused=True, **kw), "AdamW(fused=True)"
        except (TypeError, RuntimeError, ValueError) as e:
            print(f"[peer] fused AdamW unavailable ({e!r})", file=sys.stderr)
    try:
        return torch.optim.AdamW(params, foreach=True, **kw), "AdamW(foreach=True)"
    except (TypeError, RuntimeError, ValueError):
        return torch.optim.AdamW(params, **kw), "AdamW"


class Trainer:
    """One HF-Trainer-like optimisation step: autocast forward with return_loss, backward, NaN/Inf check of the
    loss (HF's logging_nan_inf_filter: a host sync each step), clip to norm 1.0, AdamW, LR schedule, zero_grad."""

    def __init__(self, model, device, lr, bf16, nan_check):
        self.model, self.device, self.bf16, self.nan_check = model, device, bf16, nan_check
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.opt, self.opt_name = make_optimizer(self.params, lr, device)
        total = 10000  # a long run's linear decay: the LR barely moves over a benchmark
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: max(0.0, 1.0 - s / total))
        self.nonfinite = 0

    def step(self, b):
        if self.bf16:
            ctx = torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)
        else:
            import contextlib
            ctx = contextlib.nullcontext()
        with ctx:
            out = self.model(input_ids=b["input_ids"], attention_mask=b["attention_mask"],
                             pixel_values=b["pixel_values"], return_loss=True)
        loss = out.loss
        loss.backward()
        if self.nan_check and bool(torch.isnan(loss) or torch.isinf(loss)):
            self.nonfinite += 1
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad(set_to_none=True)
        return loss.detach()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def to_device(b, device):
    nb = device.type == "cuda"
    return {k: v.to(device, non_blocking=nb) for k, v in b.items()}


def make_loader(ds, tok, batch, workers, n_batches, device):
    g = torch.Generator()
    g.manual_seed(0)  # every run reads the same samples in the same order
    sampler = RandomSampler(ds, replacement=False, num_samples=n_batches * batch, generator=g)
    # Only options valid for every worker count: persistent_workers / prefetch_factor must not be passed with 0
    # workers (torch raises), and their defaults (False / 2) are what HF Trainer uses.
    return DataLoader(ds, batch_size=batch, sampler=sampler, num_workers=workers, collate_fn=Collate(tok),
                      pin_memory=device.type == "cuda", drop_last=True)


def timed(device, warmup, steps, next_batch, work):
    """warmup x work(next_batch()), sync, then time steps of the same; -> (seconds, seconds blocked in next_batch)."""
    for _ in range(warmup):
        work(next_batch())
    sync(device)
    t0 = time.perf_counter()
    wait = 0.0
    for _ in range(steps):
        tw = time.perf_counter()
        b = next_batch()
        wait += time.perf_counter() - tw
        work(b)
    sync(device)
    return time.perf_counter() - t0, wait


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with captions.jsonl + images (make_images.py's layout)")
    ap.add_argument("--write_tokenizer", metavar="DIR",
                    help="only write this peer's RoBERTa-style vocab.json + merges.txt to DIR (for bridgetune's "
                         "--tokenizer_name, so both sides use one vocabulary) and exit")
    ap.add_argument("--workers", nargs="+", default=["0", "1", "2", "8"], help="DataLoader num_workers values")
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--size", type=int, default=None, help="image size (default: the preset's, 294 for large)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--out", default=None, help="JSONL file, rewritten after every run")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="large", choices=["large", "tiny"])
    ap.add_argument("--budget_s", type=float, default=170.0,
                    help="wall-clock budget from process start; runs that no longer fit are skipped")
    ap.add_argument("--max_length", type=int, default=128, help="caption truncation (HF example / bridgetune: 128)")
    ap.add_argument("--padding", default="longest", choices=["longest", "max_length"],
                    help="longest: pad to the batch's longest caption (bridgetune's padding); max_length: the HF "
                         "example's padding to --max_length")
    ap.add_argument("--decode", default="pil", choices=["pil", "tvio"],
                    help="pil: PIL + ToTensor; tvio: torchvision.io.read_image + tensor transforms (run_clip.py)")
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--tf32", action="store_true", help="TF32 for the fp32 matmuls autocast leaves (off: as bridgetune)")
    ap.add_argument("--no_bf16", action="store_true", help="fp32 forward (no autocast)")
    ap.add_argument("--no_nan_check", action="store_true", help="skip the per-step NaN/Inf check (and its sync)")
    ap.add_argument("--loader_only", action="store_true", help="time the DataLoader alone, no model")
    args = ap.parse_args()
    if args.write_tokenizer:
        vocab, merges = load_roberta_style_vocab()
        os.makedirs(args.write_tokenizer, exist_ok=True)
        with open(os.path.join(args.write_tokenizer, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False)
        with open(os.path.join(args.write_tokenizer, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
        print(f"wrote {len(vocab)} tokens, {len(merges)} merges to {args.write_tokenizer}")
        return 0
    if not args.data:
        raise SystemExit("--data is required (unless --write_tokenizer)")
    workers = [int(w) for item in args.workers for w in str(item).split(",") if w.strip()]
    device = torch.device(args.device)
    preset = preset_config(args.preset)
    size = args.size or preset["vision_config"]["image_size"]
    if args.batch < 2:
        raise SystemExit("--batch must be >= 2 (the contrastive loss needs negatives)")
    if args.max_length < 3:
        raise SystemExit("--max_length must be >= 3")
    if args.steps < 1 or args.warmup < 0:
        raise SystemExit("--steps must be >= 1 and --warmup >= 0")

    import PIL
    try:
        import torchvision
        tv_version = torchvision.__version__
    except ImportError:
        tv_version = None  # the PIL-only transform runs instead
    common = {"peer": "HF BridgeTowerForContrastiveLearning", "preset": args.preset, "batch": args.batch,
              "image_size": size, "device": str(device), "warmup": args.warmup, "steps": args.steps,
              "decode": args.decode, "max_length": args.max_length, "padding": args.padding,
              "bf16_autocast": not args.no_bf16, "per_step_sync": not args.no_nan_check,
              "torch": torch.__version__, "torchvision": tv_version, "pillow": PIL.__version__,
              "python": platform.python_version(), "cpus": os.cpu_count()}
    results = []
    failed = []

    def emit(r):
        r = {**common, "loader": None, "workers": None, "samples_per_s": None, "step_ms": None, **r}
        print(json.dumps(r), flush=True)
        results.append(r)
        if args.out:
            tmp = args.out + ".tmp"
            with open(tmp, "w") as f:
                f.write("".join(json.dumps(x) + "\n" for x in results))
            os.replace(tmp, args.out)
        if r.get("error"):
            failed.append(r)

    def left():
        return args.budget_s - (time.monotonic() - T_START)

    def log(msg):
        print(f"[peer {time.monotonic() - T_START:6.1f}s] {msg}", file=sys.stderr, flush=True)

    # Device, data and tokenizer first (cheap; a failure here ends the script with one error line).
    try:
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"--device {args.device}: torch {torch.__version__} sees no CUDA device")
            common["gpu"] = torch.cuda.get_device_name(device)
            # TF32 as bridgetune runs (torch's defaults, what HF Trainer keeps without --tf32) unless asked.
            common["tf32"] = set_tf32() if args.tf32 else "torch defaults (matmul off, cuDNN conv on)"
        tok, tok_name, tok_notes = make_tokenizer(args.max_length, args.padding, allow_hf=not args.loader_only)
        common.update(tokenizer=tok_name, tokenizer_notes=tok_notes)
        ds = Captions(args.data, size, args.decode)
        common.update(dataset_rows=len(ds), transforms_api=ds.tf_api)
        t = time.perf_counter()
        first = Collate(tok)([ds[i % len(ds)] for i in range(args.batch)])
        load_s = time.perf_counter() - t  # one batch made by one process: the loader's CPU cost
        common["cpu_ms_per_sample"] = round(1000 * load_s / args.batch, 2)
        log(f"tokenizer: {tok_name}; one batch on one core: {load_s:.2f} s")
    except Exception as e:  # noqa: BLE001
        emit({"loader": "setup", "error": repr(e), "traceback": traceback.format_exc()[-2000:]})
        return 1

    n_batches = args.warmup + args.steps

    def loader_run(w, label, work, per_step_s):
        # Warm-up covers the DataLoader's prefetch (prefetch_factor 2 per worker), so the timed steps never eat
        # batches the workers made before the clock started.
        wu = max(args.warmup, 2 * w)
        n_batches = wu + args.steps
        # time estimate: worker start-up (a batch per worker in parallel) + every step at the slower of the
        # model step and the loader's rate
        est = (load_s if w else 0) + 2 + n_batches * (per_step_s + load_s if w == 0 else max(per_step_s, load_s / w))
        if est * 1.3 > left():
            emit({"loader": label, "workers": w, "skipped": f"needs ~{est:.0f} s, {left():.0f} s of budget left"})
            return
        it = dl = None
        try:
            t_run = time.perf_counter()
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            dl = make_loader(ds, tok, args.batch, w, n_batches, device)
            it = iter(dl)
            last = {}

            def nxt():
                return to_device(next(it), device) if work else next(it)

            def do(b):
                if work:
                    last["loss"] = work(b)

            el, wait = timed(device, wu, args.steps, nxt, do)
            r = {"loader": label, "workers": w, "warmup": wu, "samples_per_s": round(args.batch * args.steps / el, 2),
                 "step_ms": round(1000 * el / args.steps, 1), "loader_wait_pct": round(100 * wait / el, 1),
                 "run_s": round(time.perf_counter() - t_run, 1)}
            if "loss" in last:
                r["loss"] = round(float(last["loss"]), 4)
                r["nonfinite_losses"] = trainer_ref[0].nonfinite if trainer_ref else None
            if device.type == "cuda" and work:
                r["max_mem_gb"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 1)
            emit(r)
            log(f"{label} workers={w}: {r['samples_per_s']} samples/s")
        except Exception as e:  # noqa: BLE001
            emit({"loader": label, "workers": w, "error": repr(e), "traceback": traceback.format_exc()[-2000:]})
            log(f"{label} workers={w} failed: {e!r}")
            if trainer_ref:  # e.g. out of memory mid-step: drop the gradients before the next run
                trainer_ref[0].opt.zero_grad(set_to_none=True)
        finally:
            del it, dl  # shuts the workers down
            gc.collect()
            if device.type == "cuda" and failed and failed[-1].get("workers") == w:
                torch.cuda.empty_cache()

    trainer_ref = []  # the Trainer once built (its NaN/Inf count goes into each run's line)
    loader_label = "torch DataLoader + " + ("PIL" if args.decode == "pil" else "torchvision.io")
    if args.loader_only:
        for w in workers:
            loader_run(w, loader_label + " (loader only)", None, 0.0)
        return 1 if failed else 0

    # The model, built once and reused by every run; without transformers there is none to build.
    try:
        import transformers
    except ImportError:
        emit({"loader": "model_build", "skipped": "transformers is not installed: no model figures (no model_only "
              "ceiling, no training step); the lines below time the DataLoader alone (loader only)"})
        log("transformers is not installed: timing the DataLoader alone")
        for w in workers:
            loader_run(w, loader_label + " (loader only)", None, 0.0)
        return 1 if failed else 0
    try:
        common["transformers"] = transformers.__version__
        t = time.perf_counter()
        cfg = build_config(preset)
        model, how = build_model(cfg, device)
        trainer = Trainer(model, device, args.lr, not args.no_bf16, not args.no_nan_check)
        trainer_ref.append(trainer)
        common.update(init_s=round(time.perf_counter() - t, 1), init=how, optimizer=trainer.opt_name,
                      params=sum(p.numel() for p in model.parameters()),
                      param_dtype=str(next(model.parameters()).dtype).replace("torch.", ""),
                      attn_implementation=getattr(model.config, "_attn_implementation", None),
                      grad_clip=1.0, lr_schedule="linear")
        log(f"model: {common['params'] / 1e6:.0f} M parameters, {how}, {common['init_s']} s")
    except Exception as e:  # noqa: BLE001
        emit({"loader": "model_build", "error": repr(e), "traceback": traceback.format_exc()[-3000:]})
        log(f"model build failed ({e!r}); timing the DataLoader alone instead")
        for w in workers:
            loader_run(w, loader_label + " (loader only)", None, 0.0)
        return 1

    # Ceiling: one fixed batch already on the device.
    step_s = 1.0  # a guess until measured
    est = 15 + n_batches * step_s
    if est > left():
        emit({"loader": "model_only", "skipped": f"needs ~{est:.0f} s, {left():.0f} s of budget left"})
    else:
        try:
            t_run = time.perf_counter()
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            gb = to_device(first, device)
            last = {}

            def do(b):
                last["loss"] = trainer.step(b)

            el, _ = timed(device, args.warmup, args.steps, lambda: gb, do)
            step_s = el / args.steps
            r = {"loader": "model_only", "samples_per_s": round(args.batch * args.steps / el, 2),
                 "step_ms": round(1000 * step_s, 1), "loss": round(float(last["loss"]), 4),
                 "nonfinite_losses": trainer.nonfinite,
                 "run_s": round(time.perf_counter() - t_run, 1)}
            if device.type == "cuda":
                r["max_mem_gb"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 1)
            emit(r)
            log(f"model_only: {r['samples_per_s']} samples/s, {r['step_ms']} ms/step")
            del gb
        except Exception as e:  # noqa: BLE001
            emit({"loader": "model_only", "error": repr(e), "traceback": traceback.format_exc()[-3000:]})
            log(f"model_only failed: {e!r}")
            trainer.opt.zero_grad(set_to_none=True)
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()

    if failed and failed[-1]["loader"] == "model_only":  # every model step would fail alike: time the loader alone
        log("the model step failed; timing the DataLoader alone instead")
        for w in workers:
            loader_run(w, loader_label + " (loader only)", None, 0.0)
        return 1
    for w in workers:
        loader_run(w, loader_label, trainer.step, step_s)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
