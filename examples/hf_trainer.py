#!/usr/bin/python3
"""Hugging Face Trainer fed by bridgetune.DataLoader: a Trainer subclass whose get_train_dataloader returns it.

    PYTHONPATH=build/python python3 examples/hf_trainer.py --model_name_or_path MODEL --data DATA --output_dir OUT
    PYTHONPATH=build/python python3 examples/hf_trainer.py --loader_only --data DATA --tokenizer DIR  # no transformers

MODEL is a folder or a hub id (BridgeTower/bridgetower-large-itm-mlm-itc) in the local Hugging Face cache; its
tokenizer files and preprocessor_config.json (mean/std; the model's vision image_size) set up the loader, as
run_clip.py's Transform does. DATA may be a hub dataset id too (with --split / --dataset_config_name).

The loader yields {"pixel_values", "input_ids", "attention_mask"}, which BridgeTowerForContrastiveLearning takes as
is; rank/world_size come from torch.distributed when the Trainer runs under torchrun, and the Trainer's
set_epoch(epoch) call reseeds the shuffle each epoch.

This shows the minimum by hand (training only). bridgetune.hf.ContrastiveTrainer (README, "Python") is the whole
drop-in: evaluation with eval_loss, retrieval and matching metrics, and resume through the loader's state.
"""
import argparse

import bridgetune

try:
    from transformers import BridgeTowerForContrastiveLearning, Trainer, TrainingArguments
except ImportError:  # the loader part still runs (--loader_only)
    Trainer = None


def make_loader(data, tokenizer, batch_size, num_workers, seed, image_size=None, preprocessor=None, hub=None,
                on_bad_sample="error"):
    """hub: revision, cache_dir, split, data_config for hub ids (DataLoader's keywords)."""
    return bridgetune.DataLoader(data, batch_size=batch_size, num_workers=num_workers, seed=seed, shuffle=True,
                                 drop_last=True, tokenizer=tokenizer, preprocessor=preprocessor,
                                 image_size=image_size, transform="train", max_seq_length=128,
                                 on_bad_sample=on_bad_sample, **(hub or {}))


if Trainer is not None:
    class BridgetuneTrainer(Trainer):
        """Trains from a bridgetune.DataLoader instead of a datasets.Dataset + torch DataLoader."""

        def __init__(self, *args, train_data, model_dir, hub, on_bad_sample="error", **kwargs):
            super().__init__(*args, **kwargs)
            self.train_data, self.model_dir, self.hub = train_data, model_dir, hub
            self.on_bad_sample = on_bad_sample

        def get_train_dataloader(self):
            a = self.args
            return make_loader(self.train_data, self.model_dir, a.per_device_train_batch_size,
                               a.dataloader_num_workers or 2, a.seed, preprocessor=self.model_dir, hub=self.hub,
                               on_bad_sample=self.on_bad_sample)

        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            outputs = model(**inputs, return_loss=True)
            return (outputs.loss, outputs) if return_outputs else outputs.loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--model_name_or_path", help="BridgeTower model folder or hub id (tokenizer + "
                    "preprocessor_config.json)")
    ap.add_argument("--tokenizer", help="tokenizer folder or hub id (default: the model's)")
    ap.add_argument("--model_revision", default="main", help="hub ids: branch, tag or commit")
    ap.add_argument("--cache_dir", help="the Hugging Face hub cache (default $HF_HUB_CACHE, ~/.cache/huggingface/hub)")
    ap.add_argument("--split", help="a hub dataset's split (default train)")
    ap.add_argument("--dataset_config_name", help="a hub dataset's config")
    ap.add_argument("--output_dir", default="runs/hf_trainer")
    ap.add_argument("--per_device_train_batch_size", type=int, default=32)
    ap.add_argument("--num_train_epochs", type=float, default=1)
    ap.add_argument("--image_size", type=int)
    ap.add_argument("--loader_only", action="store_true", help="iterate one epoch of the loader, print shapes")
    ap.add_argument("--on_bad_sample", choices=["error", "skip"], default="error",
                    help="an unreadable image stops the run (error) or is left out and counted (skip)")
    args = ap.parse_args()
    tokenizer = args.tokenizer or args.model_name_or_path
    hub = {"revision": args.model_revision, "cache_dir": args.cache_dir, "split": args.split,
           "data_config": args.dataset_config_name}
    if args.loader_only or Trainer is None:
        if not args.loader_only:
            print("transformers is not installed: running the loader part only")
        loader = make_loader(args.data, tokenizer, args.per_device_train_batch_size, 2, 42, args.image_size,
                             args.model_name_or_path, hub, args.on_bad_sample)
        for batch in loader:
            shapes = {k: tuple(v.shape) for k, v in batch.items()}
        print(f"{len(loader)} batches; last: {shapes}; {loader.stats.get('skipped', 0)} bad samples skipped")
        return
    model = BridgeTowerForContrastiveLearning.from_pretrained(args.model_name_or_path, revision=args.model_revision,
                                                              cache_dir=args.cache_dir)
    targs = TrainingArguments(output_dir=args.output_dir, per_device_train_batch_size=args.per_device_train_batch_size,
                              num_train_epochs=args.num_train_epochs, remove_unused_columns=False)
    BridgetuneTrainer(model=model, args=targs, train_data=args.data, model_dir=args.model_name_or_path, hub=hub,
                      on_bad_sample=args.on_bad_sample).train()


if __name__ == "__main__":
    main()
