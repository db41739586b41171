"""A stand-in for the parts of `transformers` that bridgetune.hf uses, for tests on machines without it.

Trainer follows transformers' trainer.py call order where ContrastiveTrainer plugs in (train ->
_inner_training_loop: get_train_dataloader, the resume bookkeeping with args.ignore_data_skip and
accelerate's skip_first_batches, set_epoch, _load_rng_state, get_batch_samples, training_step -> _prepare_inputs ->
compute_loss, _maybe_log_save_evaluate -> evaluate / _save_checkpoint (save_model, optimizer, the RNG state inline
as in 4.30, trainer_state.json); evaluate -> get_eval_dataloader -> evaluation_loop -> prediction_step, losses.repeat(batch
size), compute_metrics(EvalPrediction) only with predictions and labels, the metric prefix), and its defaults are
as strict: the default compute_loss calls the model without return_loss and a plain get_train_dataloader wraps the
dataset in torch's DataLoader. FakeBridgeTower is a small BridgeTowerForContrastiveLearning look-alike.
"""
import contextlib
import dataclasses
import json
import math
import os
import re
import sys
import types
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F


@dataclasses.dataclass
class TrainingArguments:
    output_dir: str
    per_device_train_batch_size: int = 8
    per_device_eval_batch_size: int = 8
    num_train_epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 0.1
    gradient_accumulation_steps: int = 1
    save_steps: int = 0
    eval_steps: int = 0
    seed: int = 42
    ignore_data_skip: bool = False
    prediction_loss_only: bool = False
    batch_eval_metrics: bool = False
    save_only_model: bool = False
    world_size: int = 1
    process_index: int = 0
    device: str = "cpu"

    @property
    def eval_batch_size(self):
        return self.per_device_eval_batch_size


class EvalPrediction:
    def __init__(self, predictions, label_ids, losses=None, inputs=None):
        self.predictions, self.label_ids, self.losses, self.inputs = predictions, label_ids, losses, inputs


class EvalLoopOutput(NamedTuple):
    predictions: object
    label_ids: object
    metrics: Optional[dict]
    num_samples: Optional[int]


def skip_first_batches(dataloader, num_batches):
    """accelerate's: rebuilds a torch DataLoader around the old one's batch_sampler."""
    sampler = dataloader.batch_sampler
    raise AssertionError(f"the fake skip_first_batches got a batch sampler {sampler!r}")


def _to_numpy(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_to_numpy(t) for t in x)
    return x.cpu().numpy()


def _concat(parts):
    import numpy as np
    if isinstance(parts[0], (tuple, list)):
        return tuple(_concat([p[i] for p in parts]) for i in range(len(parts[0])))
    return np.concatenate(parts)


class Trainer:
    def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None,
                 processing_class=None, model_init=None, compute_loss_func=None, compute_metrics=None,
                 callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None):
        self.model, self.args = model, args
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.compute_metrics = compute_metrics
        self.label_names, self.can_return_loss = [], True
        self.optimizer, self.global_step, self.log_history, self.is_in_train = None, 0, [], False

    # ---- data: the defaults
    def get_train_dataloader(self):
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        return torch.utils.data.DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)

    def get_eval_dataloader(self, eval_dataset=None):
        data = eval_dataset if eval_dataset is not None else self.eval_dataset
        return torch.utils.data.DataLoader(data, batch_size=self.args.eval_batch_size)

    def get_test_dataloader(self, test_dataset):
        return torch.utils.data.DataLoader(test_dataset, batch_size=self.args.eval_batch_size)

    def _prepare_inputs(self, inputs):
        inputs = {k: (v.to(self.args.device) if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
        if len(inputs) == 0:
            raise ValueError("The batch received was empty")
        return inputs

    def compute_loss_context_manager(self):
        return contextlib.nullcontext()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        if outputs["loss"] is None:
            raise ValueError("The model did not return a loss from the inputs")
        return (outputs["loss"], outputs) if return_outputs else outputs["loss"]

    # ---- train
    def train(self, resume_from_checkpoint=None):
        if resume_from_checkpoint is True:
            resume_from_checkpoint = _last_checkpoint(self.args.output_dir)
        if resume_from_checkpoint is not None:
            self.model.load_state_dict(torch.load(os.path.join(resume_from_checkpoint, "pytorch_model.bin")))
        return self._inner_training_loop(self.args, resume_from_checkpoint)

    def _inner_training_loop(self, args, resume_from_checkpoint):
        train_dataloader = self.get_train_dataloader()
        len_dataloader = len(train_dataloader)
        steps_per_epoch = max(len_dataloader // args.gradient_accumulation_steps +
                              int(len_dataloader % args.gradient_accumulation_steps > 0), 1)
        if args.max_steps > 0:
            max_steps = args.max_steps
            num_train_epochs = args.max_steps // steps_per_epoch + int(args.max_steps % steps_per_epoch > 0)
        else:
            max_steps = math.ceil(args.num_train_epochs * steps_per_epoch)
            num_train_epochs = math.ceil(args.num_train_epochs)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.learning_rate)
        if resume_from_checkpoint is not None:
            self.optimizer.load_state_dict(torch.load(os.path.join(resume_from_checkpoint, "optimizer.pt")))
        self.global_step, epochs_trained, steps_trained_in_current_epoch = 0, 0, 0
        if resume_from_checkpoint is not None:
            with open(os.path.join(resume_from_checkpoint, "trainer_state.json")) as f:
                self.global_step = json.load(f)["global_step"]
            epochs_trained = self.global_step // steps_per_epoch
            if not args.ignore_data_skip:
                steps_trained_in_current_epoch = (self.global_step % steps_per_epoch) * args.gradient_accumulation_steps
        self.model.zero_grad()
        for epoch in range(epochs_trained, num_train_epochs):
            epoch_dataloader = train_dataloader
            if hasattr(epoch_dataloader, "set_epoch"):
                epoch_dataloader.set_epoch(epoch)
            steps_in_epoch = len(epoch_dataloader)
            if epoch == epochs_trained and resume_from_checkpoint is not None and steps_trained_in_current_epoch == 0:
                self._load_rng_state(resume_from_checkpoint)
            if steps_trained_in_current_epoch > 0:
                epoch_dataloader = skip_first_batches(epoch_dataloader, steps_trained_in_current_epoch)
                steps_trained_in_current_epoch = 0
            epoch_iterator = iter(epoch_dataloader)
            accum = args.gradient_accumulation_steps
            remainder = steps_in_epoch % accum or accum
            total_updates = steps_in_epoch // accum + int(remainder < accum)
            step = -1
            for update in range(total_updates):
                batch_samples = self.get_batch_samples(epoch_iterator, accum if update != total_updates - 1
                                                       else remainder)
                for inputs in batch_samples:
                    step += 1
                    self.training_step(self.model, inputs)
                    if (step + 1) % accum == 0 or step + 1 == steps_in_epoch:
                        self.optimizer.step()
                        self.model.zero_grad()
                        self.global_step += 1
                        self._maybe_log_save_evaluate()
                    if self.global_step >= max_steps:
                        return self.global_step
            if step < 0:  # "There seems not to be a single sample in your epoch_iterator": training stops
                return self.global_step
        return self.global_step

    def get_batch_samples(self, epoch_iterator, num_batches):
        batches = []
        for _ in range(num_batches):
            try:
                batches.append(next(epoch_iterator))
            except StopIteration:
                break
        return batches

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        (loss / self.args.gradient_accumulation_steps).backward()
        return loss.detach()

    def _maybe_log_save_evaluate(self):
        if self.args.eval_steps and self.global_step % self.args.eval_steps == 0:
            self.evaluate()
        if self.args.save_steps and self.global_step % self.args.save_steps == 0:
            self._save_checkpoint(self.model, None)

    # ---- checkpoints
    def _save_checkpoint(self, model, trial):
        output_dir = os.path.join(self.args.output_dir, f"checkpoint-{self.global_step}")
        os.makedirs(output_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
        if not self.args.save_only_model:
            torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
            # transformers 4.30 (the version checked by hand) saves the RNG state inline, with no
            # _save_rng_state hook to plug into; later versions moved it into one.
            name = "rng_state.pth" if self.args.world_size <= 1 else f"rng_state_{self.args.process_index}.pth"
            torch.save({"cpu": torch.random.get_rng_state()}, os.path.join(output_dir, name))
        with open(os.path.join(output_dir, "trainer_state.json"), "w") as f:
            json.dump({"global_step": self.global_step}, f)

    @property
    def state(self):  # TrainerState's global_step, the one field read here
        return types.SimpleNamespace(global_step=self.global_step)

    def _get_output_dir(self, trial):
        return self.args.output_dir

    def _load_rng_state(self, checkpoint):
        if checkpoint is None:
            return
        path = os.path.join(checkpoint, "rng_state.pth")
        if os.path.isfile(path):
            torch.random.set_rng_state(torch.load(path)["cpu"])

    # ---- evaluate
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        override = eval_dataset is not None
        eval_dataset = eval_dataset if override else self.eval_dataset
        if isinstance(eval_dataset, dict):
            metrics = {}
            for name, data in eval_dataset.items():
                metrics.update(self.evaluate(data if override else name, ignore_keys, f"{metric_key_prefix}_{name}"))
            return metrics
        dataloader = self.get_eval_dataloader(eval_dataset)
        output = self.evaluation_loop(dataloader, description="Evaluation",
                                      prediction_loss_only=True if self.compute_metrics is None else None,
                                      ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)
        self.log_history.append(dict(output.metrics, step=self.global_step))
        return output.metrics

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test"):
        return self.evaluation_loop(self.get_test_dataloader(test_dataset), description="Prediction",
                                    ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)

    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        args = self.args
        prediction_loss_only = prediction_loss_only if prediction_loss_only is not None else args.prediction_loss_only
        self.model.eval()
        batch_size = args.eval_batch_size
        losses, preds, labels = [], [], []
        for inputs in dataloader:
            loss, logits, label_ids = self.prediction_step(self.model, inputs, prediction_loss_only, ignore_keys)
            if loss is not None:
                losses.append(loss.repeat(batch_size).cpu().numpy())
            if logits is not None:
                preds.append(_to_numpy(logits))
            if label_ids is not None:
                labels.append(_to_numpy(label_ids))
        all_preds = _concat(preds) if preds else None
        all_labels = _concat(labels) if labels else None
        metrics = {}
        if self.compute_metrics is not None and all_preds is not None and all_labels is not None:
            metrics = self.compute_metrics(EvalPrediction(predictions=all_preds, label_ids=all_labels))
        if losses:
            import numpy as np
            metrics[f"{metric_key_prefix}_loss"] = float(np.concatenate(losses).mean())
        for key in list(metrics):
            if not key.startswith(f"{metric_key_prefix}_"):
                metrics[f"{metric_key_prefix}_{key}"] = metrics.pop(key)
        return EvalLoopOutput(all_preds, all_labels, metrics, len(getattr(dataloader, "dataset", [])))

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            outputs = model(**inputs)
        return None, tuple(v for k, v in outputs.items() if k != "loss"), None


def _last_checkpoint(folder):
    steps = [int(m.group(1)) for d in os.listdir(folder) if (m := re.fullmatch(r"checkpoint-(\d+)", d))]
    if not steps:
        raise ValueError(f"No valid checkpoint found in output directory ({folder})")
    return os.path.join(folder, f"checkpoint-{max(steps)}")


class SimulatedCrash(Exception):
    pass


class ContrastiveOutput(dict):
    """ModelOutput's two faces: keys and attributes."""
    __getattr__ = dict.__getitem__


class FakeBridgeTower(torch.nn.Module):
    """BridgeTowerForContrastiveLearning's interface: pixel_values + input_ids + attention_mask -> L2-normalised
    text/image/cross embeddings, logits, and with return_loss=True HF's loss. Records the training batches' ids."""

    def __init__(self, dim=8, vocab=512, crash_at=None):
        super().__init__()
        torch.manual_seed(0)
        self.image = torch.nn.Linear(3 * 4 * 4, dim)
        self.text = torch.nn.Embedding(vocab, dim)
        self.logit_scale = torch.nn.Parameter(torch.tensor(2.0))
        self.vocab, self.crash_at, self.seen = vocab, crash_at, []

    def embed(self, pixel_values, input_ids, attention_mask):
        image = F.normalize(self.image(F.adaptive_avg_pool2d(pixel_values, 4).flatten(1)), dim=-1)
        mask = attention_mask[..., None].float()
        text = F.normalize((self.text(input_ids % self.vocab) * mask).sum(1) / mask.sum(1), dim=-1)
        return image, text

    def forward(self, input_ids=None, attention_mask=None, pixel_values=None, return_loss=None):
        if self.training:
            if self.crash_at is not None and len(self.seen) == self.crash_at:
                raise SimulatedCrash(f"crashed before training batch {self.crash_at}")
            self.seen.append(input_ids.detach().clone())
        image, text = self.embed(pixel_values, input_ids, attention_mask)
        cross = F.normalize(image + text, dim=-1)
        scale = self.logit_scale.exp()
        logits = torch.stack([text @ image.T, text @ cross.T, image @ cross.T], 1) * scale
        loss = None
        if return_loss:
            target = torch.arange(len(text), device=text.device)
            loss = sum(F.cross_entropy(logits[:, i], target) + F.cross_entropy(logits[:, i].T, target)
                       for i in range(3)) / 6
        return ContrastiveOutput(loss=loss, logits=logits, text_embeds=text, image_embeds=image, cross_embeds=cross)


def install(monkeypatch):
    """Makes `import transformers` give this module's Trainer (undone with the monkeypatch)."""
    fake = types.ModuleType("transformers")
    fake.Trainer, fake.TrainingArguments, fake.EvalPrediction = Trainer, TrainingArguments, EvalPrediction
    monkeypatch.setitem(sys.modules, "transformers", fake)
    import bridgetune.hf
    monkeypatch.setattr(bridgetune.hf, "_TRAINER", None)  # built again over this Trainer
    return fake
