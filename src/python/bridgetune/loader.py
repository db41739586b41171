"""bridgetune.DataLoader: torch's DataLoader idiom over the C++ loader (src/python/loader_core.h).

Epochs: iterating runs epoch `e` (0 first, or what set_epoch chose); a fully consumed epoch advances `e` by one, so
a plain `for epoch in ...: for batch in loader:` reshuffles each epoch as torch's RandomSampler does, and calling
set_epoch(e) every epoch (the DistributedSampler idiom) gives the same order. An iteration abandoned midway leaves
the epoch as it was; state_dict() records (epoch, samples consumed) and load_state_dict() makes the next
iteration resume there, yielding exactly the batches an uninterrupted run had left.
"""
from . import _native
from .preprocessing import Tokenizer, data_source, resolve_image_settings, to_tensor

_STATE_KEYS = ("batch_size", "seed", "shuffle", "rank", "world_size", "rows_per_epoch", "transform")


def _distributed_defaults(rank, world_size):
    """rank/world_size from torch.distributed when it is initialised and they were not given; else 0/1."""
    if rank is None or world_size is None:
        try:
            import torch.distributed as dist

            if dist.is_available() and dist.is_initialized():
                rank = dist.get_rank() if rank is None else rank
                world_size = dist.get_world_size() if world_size is None else world_size
        except ImportError:
            pass
    return (0 if rank is None else int(rank)), (1 if world_size is None else int(world_size))


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


class DataLoader:
    """Batches of (image, caption) data as dicts of tensors, made by C++ worker threads.

    data: anything `bridgetune train` accepts: a folder with captions.jsonl/.csv, a JSONL/CSV file, parquet
    (file, folder or glob) or WebDataset tar shards (path, folder or brace pattern); or a hub dataset id
    ("org/name") in the local Hugging Face cache, read as the parquet files of `split` (default "train") and
    `data_config` at `data_revision`. tokenizer / preprocessor: a model folder or hub id (at `revision`), or a
    bridgetune.Tokenizer; the preprocessor's mean/std and the model's vision image_size set the transform.
    cache_dir: the hub cache (default $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). Yields
    {"pixel_values": float32 [B,3,S,S], "input_ids": int64 [B,L], "attention_mask": int64 [B,L]}, or
    {"pixel_values", "captions": list of str} without a tokenizer.
    """

    def __init__(self, data, batch_size, num_workers=2, shuffle=True, seed=0, drop_last=True, image_size=None,
                 mean=None, std=None, preprocessor=None, tokenizer=None, max_seq_length=128, image_column="image",
                 caption_column="caption", transform="eval", on_bad_sample="error", rank=None, world_size=None,
                 pin_memory=False, padding="longest", jpeg_dct_scaling=None, prefetch_batches=4,
                 decoded_cache_mb=512, dedupe_images_in_batch=False, revision="main", cache_dir=None, split=None,
                 data_config=None, data_revision="main"):
        o = _native.LoaderOptions()
        o.data = data_source(data, split, data_config, data_revision, cache_dir)
        o.batch_size, o.num_workers, o.shuffle, o.seed = int(batch_size), int(num_workers), bool(shuffle), int(seed)
        o.drop_last = bool(drop_last)
        o.image_size, o.mean, o.std = resolve_image_settings(image_size, mean, std, preprocessor, revision, cache_dir)
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            tokenizer = Tokenizer(tokenizer, revision, cache_dir)  # resolves a hub id; a missing file raises here
        o.tokenizer_dir = "" if tokenizer is None else tokenizer.path
        o.max_seq_length, o.padding = int(max_seq_length), _choice("padding", padding, ("longest", "max_length"))
        o.image_column, o.caption_column = image_column, caption_column
        o.transform = _choice("transform", transform, ("eval", "train"))
        o.on_bad_sample = _choice("on_bad_sample", on_bad_sample, ("error", "skip"))
        o.jpeg_dct_scaling = -1 if jpeg_dct_scaling is None else int(bool(jpeg_dct_scaling))
        o.rank, o.world_size = _distributed_defaults(rank, world_size)
        o.prefetch_batches, o.decoded_cache_mb = int(prefetch_batches), int(decoded_cache_mb)
        o.dedupe_images_in_batch = bool(dedupe_images_in_batch)
        self._core = _native.Loader(o)
        self._opt = o
        self.batch_size, self.num_workers, self.pin_memory = o.batch_size, o.num_workers, bool(pin_memory)
        self._epoch, self._resume = 0, 0  # the next iteration: epoch, and where it starts (load_state_dict)
        self._position = 0                # samples of the current epoch handed out so far
        self._generation = 0              # a new iteration invalidates older iterators
        self.last_batch_info = None       # epoch, index, first_sample, size, rows, skipped of the last batch

    def __len__(self):
        return self._core.batches_per_epoch()

    @property
    def epoch(self):
        return self._epoch

    def set_epoch(self, epoch):
        """Shuffle and augmentation seed of the next iteration (as DistributedSampler.set_epoch)."""
        self._epoch, self._resume, self._position = int(epoch), 0, 0

    def state_dict(self):
        o = self._opt
        return {"epoch": self._epoch, "position": self._position, "batch_size": o.batch_size, "seed": o.seed,
                "shuffle": o.shuffle, "rank": o.rank, "world_size": o.world_size,
                "rows_per_epoch": self._core.rows_per_epoch(), "transform": o.transform}

    def load_state_dict(self, state):
        mine = self.state_dict()
        for k in _STATE_KEYS:
            if k in state and state[k] != mine[k]:
                raise ValueError(f"load_state_dict: the state was saved with {k}={state[k]!r}, this loader has "
                                 f"{k}={mine[k]!r}; resume with the same data and options")
        self._epoch, self._resume = int(state["epoch"]), int(state["position"])
        self._position = self._resume

    @property
    def stats(self):
        """samples delivered, bad samples skipped (on_bad_sample="skip") and the first few reasons, cache use."""
        return self._core.stats()

    def __iter__(self):
        self._generation += 1
        epoch, start = self._epoch, self._resume
        self._resume = 0
        self._core.start(epoch, start)
        self._position = start
        return self._batches(self._generation, epoch)

    def _batches(self, generation, epoch):
        pin = self.pin_memory and _cuda_available()
        while True:
            if generation != self._generation:
                raise RuntimeError("bridgetune.DataLoader: a newer iteration over this loader started; "
                                   "iterate one at a time")
            item = self._core.next()
            if item is None:
                self._epoch, self._position = epoch + 1, 0
                return
            batch, meta = item
            out = {k: (v if k == "captions" else to_tensor(v)) for k, v in batch.items()}
            if pin:
                out = {k: (v.pin_memory() if k != "captions" else v) for k, v in out.items()}
            self._position = meta["first_sample"] + meta["size"]
            self.last_batch_info = meta
            yield out


def _cuda_available():
    import torch

    return torch.cuda.is_available()
