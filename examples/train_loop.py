#!/usr/bin/python3
"""A plain PyTorch training loop fed by bridgetune.DataLoader (contrastive image-text loss, a small torch model).

    PYTHONPATH=build/python python3 examples/train_loop.py --data DATA --tokenizer MODEL_DIR --steps 20

Swap `TinyClip` for `BridgeTowerForContrastiveLearning.from_pretrained(...)` and call it as
`model(**batch, return_loss=True).loss`: the batch dict has exactly the keys that model takes. The loader's
state_dict() goes into the checkpoint next to the model's, so a resumed run sees exactly the remaining batches.
"""
import argparse

import torch
import torch.nn.functional as F

import bridgetune


class TinyClip(torch.nn.Module):
    """Image and text towers projected to a shared space; CLIP's symmetric cross-entropy."""

    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.image = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 5, stride=4), torch.nn.ReLU(),
                                         torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, dim))
        self.text = torch.nn.EmbeddingBag(vocab_size, dim, mode="sum")
        self.logit_scale = torch.nn.Parameter(torch.tensor(2.0))

    def forward(self, pixel_values, input_ids, attention_mask):
        img = F.normalize(self.image(pixel_values), dim=-1)
        mask = attention_mask.float()  # mean over the real tokens, padding left out
        txt = F.normalize(self.text(input_ids, per_sample_weights=mask) / mask.sum(1, keepdim=True), dim=-1)
        logits = self.logit_scale.exp() * img @ txt.t()
        labels = torch.arange(logits.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="anything `bridgetune train --train_file` accepts")
    ap.add_argument("--tokenizer", required=True, help="model folder with tokenizer.json or vocab.json + merges.txt")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch_size", type=int, default=16)
    ap.add_argument("--image_size", type=int, default=288)
    ap.add_argument("--num_workers", type=int, default=2)
    ap.add_argument("--checkpoint", help="save model + loader state here at the end")
    ap.add_argument("--on_bad_sample", choices=["error", "skip"], default="error",
                    help="an unreadable image stops the run (error) or is left out and counted (skip)")
    args = ap.parse_args()

    loader = bridgetune.DataLoader(args.data, batch_size=args.batch_size, num_workers=args.num_workers,
                                   image_size=args.image_size, tokenizer=args.tokenizer, transform="train",
                                   max_seq_length=32, drop_last=True,  # a contrastive loss wants full batches
                                   on_bad_sample=args.on_bad_sample)
    model = TinyClip(len(bridgetune.Tokenizer(args.tokenizer)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step, epoch = 0, 0
    while step < args.steps:
        loader.set_epoch(epoch)
        for batch in loader:
            loss = model(**batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
            if step == args.steps:
                break
        epoch += 1
    skipped = loader.stats.get("skipped", 0)
    if skipped:
        print(f"{skipped} bad samples skipped (--on_bad_sample skip)", flush=True)
    if args.checkpoint:
        torch.save({"model": model.state_dict(), "loader": loader.state_dict()}, args.checkpoint)


if __name__ == "__main__":
    main()
