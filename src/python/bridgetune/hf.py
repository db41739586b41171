"""Hugging Face's Trainer on bridgetune.DataLoader with no overrides: the contrastive loss, eval_loss, retrieval and
matching metrics, and mid-epoch resume through the loader's state.

    from bridgetune.hf import ContrastiveTrainer     # imports transformers on first use, not before
    trainer = ContrastiveTrainer(model=BridgeTowerForContrastiveLearning.from_pretrained(...), args=args,
                                 train_dataset=bridgetune.DataLoader(train, ..., transform="train"),
                                 eval_dataset=bridgetune.DataLoader(val, ..., shuffle=False))
    trainer.train(); trainer.evaluate()              # eval_loss, eval_i2t_r1 ... eval_t2i_r10, eval_matching_accuracy

ContrastiveTrainerMixin is the same behaviour for a Trainer subclass of your own (class T(ContrastiveTrainerMixin,
Trainer)). What it does, at the Trainer's own hook points (transformers' trainer.py):
- get_train_dataloader / get_eval_dataloader / get_test_dataloader return the bridgetune loaders passed as
  train_dataset / eval_dataset (a dict of them too) / test_dataset; the loaders batch, shard and shuffle themselves.
- compute_loss calls the model with return_loss=True (BridgeTowerForContrastiveLearning) and returns its loss.
- prediction_step returns the loss (weighted by the batch's rows; a one-row batch has no negatives and no loss, as
  in `bridgetune train`), the image and text embeddings as predictions, and as labels each row's image identity
  (a fingerprint of the loader's image key, as `bridgetune evaluate` groups its gallery: a fingerprint of the
  pixels for batches that do not come from a bridgetune.DataLoader) and dataset row.
- compute_metrics defaults to compute_retrieval_metrics: every evaluated row is a text query, the distinct images
  the gallery, a row the loader delivered twice (a skipped sample's replacement, a rank's padding) counts once.
- evaluation_loop adds the matching task when the evaluated data has its questions: matching_data="auto" reads
  matching.jsonl beside the loader's data (what `bridgetune synth` writes; the C++ trainer does the same), a path
  names a matching JSONL file (image, caption_choices, label) or its folder, None turns it off. Each question's
  image runs with each of its choices through the model; every process scores all questions.
- Resume: each checkpoint gets bridgetune_loader.json (bridgetune_loader_<rank>.json with several processes) next
  to rng_state.pth (written from _save_checkpoint, which every transformers version calls), and resume_from_checkpoint loads it where the Trainer restores the RNG state, so the run goes
  on batch for batch. The Trainer's own data skip (accelerate's skip_first_batches, which this loader cannot
  serve) is therefore turned off: args.ignore_data_skip is set True; one given as True keeps its meaning (the
  resumed epoch restarts from its first batch).
"""
import concurrent.futures
import copy
import hashlib
import json
import os
import warnings

import numpy as np

from . import metrics as _metrics
from .loader import DataLoader

_ROWS = "bridgetune_rows"  # the key the eval batches carry their dataset rows under (removed before the model)
_IMAGES = "bridgetune_images"  # ... and their image keys' fingerprints
_LOADER_STATE = "bridgetune_loader"


def compute_retrieval_metrics(eval_pred):
    """The default compute_metrics: retrieval from prediction_step's outputs (predictions = (image_embeds,
    text_embeds), label_ids = [N, 2] (image fingerprint, dataset row)), with bridgetune.metrics' names."""
    preds, ids = eval_pred.predictions, eval_pred.label_ids
    if isinstance(ids, list) and ids:  # eval_do_concat_batches=False: one entry per batch
        preds = tuple(np.concatenate([p[i] for p in preds]) for i in range(2))
        ids = np.concatenate(ids)
    if not isinstance(preds, (tuple, list)) or len(preds) != 2 or ids is None or np.ndim(ids) != 2:
        raise ValueError("compute_retrieval_metrics expects ContrastiveTrainer's predictions ((image_embeds, "
                         "text_embeds), label_ids [N, 2]); pass your own compute_metrics for other outputs")
    image_embeds, text_embeds, ids = np.asarray(preds[0]), np.asarray(preds[1]), np.asarray(ids)
    rows = ids[:, 1]
    _, first = np.unique(rows, return_index=True)  # each dataset row once, its first delivery
    keep = np.sort(np.concatenate([first[rows[first] >= 0], np.flatnonzero(rows < 0)]))  # -1: row unknown
    fingerprints = ids[keep, 0]
    _, gallery_rows, owner = np.unique(fingerprints, return_index=True, return_inverse=True)
    out = _metrics.retrieval_metrics(image_embeds[keep][gallery_rows], text_embeds[keep], owner.reshape(-1))
    out["samples"] = len(keep)
    out["images"] = len(gallery_rows)
    return out


def _key_fingerprints(image_keys):
    """int64 per row, equal for rows showing the same image (blake2b of the loader's image key)."""
    import torch

    return torch.tensor([int.from_bytes(hashlib.blake2b(k, digest_size=8).digest(), "little", signed=True)
                         for k in image_keys], dtype=torch.int64)


def _pixel_fingerprints(pixel_values):
    """int64 per row, equal for rows with identical pixels (blake2b of the row's float32 bytes, on the CPU; hashlib
    releases the GIL, so a few threads share the work)."""
    import torch

    rows = pixel_values.detach().to("cpu", torch.float32).reshape(pixel_values.shape[0], -1).contiguous().numpy()

    def digest(row):
        return int.from_bytes(hashlib.blake2b(memoryview(row).cast("B"), digest_size=8).digest(), "little",
                              signed=True)

    return torch.tensor(list(_hash_pool().map(digest, rows)), dtype=torch.int64)


_POOL = None


def _hash_pool():
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1), thread_name_prefix="bt-hash")
    return _POOL


class _EvalBatches:
    """A bridgetune.DataLoader for the evaluation loop: epoch 0 every time (the same pixels each evaluation) and
    each batch's dataset rows under _ROWS and image-key fingerprints under _IMAGES. Everything else (len, dataset, batch_size, ...) is the loader's."""

    def __init__(self, loader):
        self.loader = loader

    def __len__(self):
        return len(self.loader)

    def __getattr__(self, name):
        if name == "loader":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __iter__(self):
        import torch

        self.loader.set_epoch(0)
        for batch in self.loader:
            batch[_ROWS] = torch.as_tensor(self.loader.last_batch_info["rows"], dtype=torch.int64)
            batch[_IMAGES] = _key_fingerprints(self.loader.last_batch_info["image_keys"])
            yield batch


def _bridgetune_loader(data, what):
    if isinstance(data, DataLoader):
        return data
    raise TypeError(f"ContrastiveTrainer: {what} must be a bridgetune.DataLoader (got {type(data).__name__}); "
                    f"pass bridgetune.DataLoader(data, batch_size=..., tokenizer=..., preprocessor=...)")


def _read_matching(path):
    """[(image path, choices, label index)] of a matching JSONL file; errors name FILE:LINE."""
    questions, folder = [], os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                image, choices = row["image"], row["caption_choices"]
                if not isinstance(image, str) or not isinstance(choices, list) or not choices:
                    raise ValueError("image must be a string and caption_choices a non-empty list")
                label = _metrics.label_index(row["label"], len(choices))
            except (ValueError, KeyError, TypeError) as e:
                why = f"missing column {e}" if isinstance(e, KeyError) else str(e)
                raise ValueError(f"{path}:{line_no}: {why}") from None
            questions.append((os.path.join(folder, image), [str(c) for c in choices], label))
    return questions


class ContrastiveTrainerMixin:
    """transformers.Trainer behaviour for BridgeTowerForContrastiveLearning on bridgetune.DataLoader (see the
    module's docstring). Keyword matching_data: "auto" (default), a matching JSONL file or folder, or None."""

    def __init__(self, *args, matching_data="auto", **kwargs):
        super().__init__(*args, **kwargs)
        if self.compute_metrics is None:
            self.compute_metrics = compute_retrieval_metrics
        if getattr(self.args, "batch_eval_metrics", False) and self.compute_metrics is compute_retrieval_metrics:
            raise ValueError("ContrastiveTrainer: batch_eval_metrics=True needs your own compute_metrics (retrieval "
                             "ranks every text against every image, so it cannot be scored batch by batch)")
        self.matching_data = matching_data
        self._matching_cache = {}
        # The loader restores its own position (_load_rng_state below); the Trainer's skip would need a sampler.
        # A copy: the caller's arguments stay as given (another trainer made from them decides the same way).
        self._restore_loader_state = not self.args.ignore_data_skip
        self.args = copy.copy(self.args)
        object.__setattr__(self.args, "ignore_data_skip", True)  # object's: some versions freeze TrainingArguments

    # ---- data
    def get_train_dataloader(self):
        loader = _bridgetune_loader(self.train_dataset, "train_dataset")
        if loader.batch_size != self.args.per_device_train_batch_size:
            warnings.warn(f"ContrastiveTrainer: the train loader's batch_size is {loader.batch_size}, "
                          f"per_device_train_batch_size {self.args.per_device_train_batch_size}: batches are the "
                          "loader's (the Trainer's logged totals use the argument)", UserWarning, stacklevel=2)
        return loader

    def get_eval_dataloader(self, eval_dataset=None):
        data = self.eval_dataset if eval_dataset is None else eval_dataset
        if isinstance(data, str) and isinstance(self.eval_dataset, dict):
            data = self.eval_dataset[data]  # evaluate() names the entry of a dict of eval datasets
        return _EvalBatches(_bridgetune_loader(data, "eval_dataset"))

    def get_test_dataloader(self, test_dataset):
        return _EvalBatches(_bridgetune_loader(test_dataset, "test_dataset"))

    # ---- loss and predictions
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**_model_inputs(inputs), return_loss=True)
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs.loss
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        import torch

        inputs = dict(inputs)
        rows, fingerprints = inputs.pop(_ROWS, None), inputs.pop(_IMAGES, None)
        n = inputs["pixel_values"].shape[0]
        if fingerprints is None and not prediction_loss_only:
            fingerprints = _pixel_fingerprints(inputs["pixel_values"])  # still on the CPU
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss, outputs = self.compute_loss(model, inputs, return_outputs=True)
        # evaluation_loop repeats the loss by the eval batch size: n copies weigh each batch by its rows
        loss = loss.detach().float().reshape(1).expand(n).contiguous() if n >= 2 else None
        if prediction_loss_only:
            return loss, None, None
        if rows is None:
            rows = torch.full((n,), -1, dtype=torch.int64)
        ids = torch.stack([fingerprints, rows.cpu()], 1).to(inputs["pixel_values"].device)
        embeds = (outputs["image_embeds"].detach().float(), outputs["text_embeds"].detach().float())
        return loss, embeds, ids

    # ---- matching
    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        output = super().evaluation_loop(dataloader, description, prediction_loss_only=prediction_loss_only,
                                         ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)
        loader = getattr(dataloader, "loader", dataloader)
        path = self._matching_file(loader)
        if path is not None:
            scores = self._score_matching(loader, path)
            output.metrics.update(_metrics._prefixed(scores, metric_key_prefix))
        return output

    def _matching_file(self, loader):
        m = self.matching_data
        if m is None or m is False:
            return None
        if m == "auto":
            data = getattr(getattr(loader, "dataset", None), "data", None)
            found = os.path.join(data, "matching.jsonl") if isinstance(data, str) and os.path.isdir(data) else None
            return found if found and os.path.isfile(found) else None
        m = os.fspath(m)
        path = os.path.join(m, "matching.jsonl") if os.path.isdir(m) else m
        if not os.path.isfile(path):
            raise FileNotFoundError(f"ContrastiveTrainer: matching_data {m!r}: no such file (a matching JSONL file, "
                                    "or a folder holding matching.jsonl)")
        return path

    def _score_matching(self, loader, path):
        """Each question's image with each of its choices through the model, in batches of the loader's size;
        an unreadable image leaves its question out under on_bad_sample="skip" (as `bridgetune evaluate`)."""
        import torch

        from ._native import Error
        from .preprocessing import Tokenizer, preprocess

        if path not in self._matching_cache:
            self._matching_cache[path] = _read_matching(path)
        o = loader._opt
        if not o.tokenizer_dir:
            raise ValueError("ContrastiveTrainer: the eval loader has no tokenizer, so matching choices cannot be "
                             "encoded: give bridgetune.DataLoader tokenizer=")
        tok, dct = Tokenizer(o.tokenizer_dir), None if o.jpeg_dct_scaling < 0 else bool(o.jpeg_dct_scaling)
        scores, labels, pending = [], [], []  # pending: (pixels [1,3,S,S], choices) of the next forward

        def flush():
            texts = [c for _, choices in pending for c in choices]
            batch = dict(tok.encode_batch(texts, max_length=o.max_seq_length, padding=o.padding))
            batch["pixel_values"] = torch.cat([px.expand(len(choices), -1, -1, -1) for px, choices in pending])
            batch = self._prepare_inputs(batch)
            with torch.no_grad(), self.compute_loss_context_manager():
                out = self.model(**batch, return_loss=False)
            row_scores = (out["text_embeds"].float() * out["image_embeds"].float()).sum(-1).cpu().numpy()
            at = 0
            for _, choices in pending:
                scores.append(row_scores[at:at + len(choices)])
                at += len(choices)
            pending.clear()

        was_training = self.model.training
        self.model.eval()
        try:
            for image, choices, label in self._matching_cache[path]:
                try:
                    px = preprocess(image, o.image_size, "eval", mean=list(o.mean), std=list(o.std),
                                    jpeg_dct_scaling=dct, max_image_pixels=int(o.max_image_pixels))
                except (Error, OSError):
                    if o.on_bad_sample != "skip":
                        raise
                    continue
                if pending and sum(len(c) for _, c in pending) + len(choices) > loader.batch_size:
                    flush()
                pending.append((px[None], choices))
                labels.append(label)
            if pending:
                flush()
        finally:
            self.model.train(was_training)
        return _metrics.matching_from_scores(scores, labels)

    # ---- checkpoints: the loader's position beside the RNG state
    def _loader_state_file(self, folder):
        name = _LOADER_STATE if self.args.world_size <= 1 else f"{_LOADER_STATE}_{self.args.process_index}"
        return os.path.join(folder, name + ".json")

    def _save_checkpoint(self, model, trial, *args, **kwargs):
        super()._save_checkpoint(model, trial, *args, **kwargs)
        # Written after the Trainer's own files, into the folder it made: transformers 4.30 saves the RNG state
        # inline here (a _save_rng_state hook came later), so this is the one hook every version calls.
        run_dir = self._get_output_dir(trial=trial) if hasattr(self, "_get_output_dir") else self.args.output_dir
        self._save_loader_state(os.path.join(run_dir, f"checkpoint-{self.state.global_step}"))

    def _save_loader_state(self, output_dir):
        loader = self.train_dataset
        if not isinstance(loader, DataLoader):
            return
        state = loader.state_dict()
        if state["position"] >= min(state["rows_per_epoch"], len(loader) * loader.batch_size):
            state = {**state, "epoch": state["epoch"] + 1, "position": 0}  # a finished epoch: the next one's start
        os.makedirs(output_dir, exist_ok=True)
        path = self._loader_state_file(output_dir)
        with open(path + ".tmp", "w") as f:
            json.dump(state, f)
        os.replace(path + ".tmp", path)

    def _load_rng_state(self, checkpoint):
        super()._load_rng_state(checkpoint)
        if checkpoint is None or not self._restore_loader_state or not isinstance(self.train_dataset, DataLoader):
            return
        path = self._loader_state_file(checkpoint)
        if not os.path.isfile(path):
            warnings.warn(f"ContrastiveTrainer: {path} is missing (a checkpoint not written by ContrastiveTrainer?): "
                          "the resumed epoch restarts from its first batch", UserWarning, stacklevel=2)
            return
        with open(path) as f:
            self.train_dataset.load_state_dict(json.load(f))


def _model_inputs(inputs):
    if "captions" in inputs and "input_ids" not in inputs:
        raise ValueError("ContrastiveTrainer: the loader yields captions, not input_ids: give bridgetune.DataLoader "
                         "a tokenizer= (the model's folder or hub id)")
    return {k: v for k, v in inputs.items() if k not in (_ROWS, _IMAGES)}


_TRAINER = None


def __getattr__(name):
    """ContrastiveTrainer is made on first use, so `import bridgetune.hf` does not import transformers."""
    global _TRAINER
    if name != "ContrastiveTrainer":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _TRAINER is None:
        try:
            from transformers import Trainer
        except ImportError as e:
            raise ImportError(f"bridgetune.hf.ContrastiveTrainer needs transformers ({e}): pip install transformers "
                              "accelerate") from None
        _TRAINER = type("ContrastiveTrainer", (ContrastiveTrainerMixin, Trainer),
                        {"__module__": __name__, "__doc__": ContrastiveTrainerMixin.__doc__})
    return _TRAINER
