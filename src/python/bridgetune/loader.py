"""bridgetune.DataLoader: torch's DataLoader idiom over the C++ loader (src/python/loader_core.h).

Epochs: iterating runs epoch `e` (0 first, or what set_epoch chose); a fully consumed epoch advances `e` by one, so
a plain `for epoch in ...: for batch in loader:` reshuffles each epoch as torch's RandomSampler does, and calling
set_epoch(e) every epoch (the DistributedSampler idiom) gives the same order. An iteration abandoned midway leaves
the epoch as it was; state_dict() records (epoch, samples consumed) and load_state_dict() makes the next
iteration resume there, yielding exactly the batches an uninterrupted run had left. set_epoch(e) with the saved
epoch keeps that position, so `load_state_dict(s); for e in range(s["epoch"], N): set_epoch(e); ...` (and HF
Trainer's own set_epoch call) resumes mid-epoch.

Pickling carries the resolved options and state_dict(): the copy (another process, `spawn`, copy.deepcopy) opens
the same data and resumes where a checkpoint taken at that moment would.
"""
import sys
import warnings

from . import _native
from .preprocessing import Tokenizer, _positive_int, data_source, resolve_image_settings, to_tensor

# The CLI's defaults (common/defaults.h, exported by the native module): one owner for both.
_DEFAULTS = _native.DEFAULTS

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

    Where it departs from torch.utils.data.DataLoader (all else, e.g. drop_last=False, pin_memory=False, len(),
    .dataset, .batch_size, a fresh shuffle each epoch, is torch's):
    - `batch_size` is required (torch: 1) and a batch is a dict of tensors, not collate_fn over dataset items:
      there is no sampler, batch_sampler, collate_fn, worker_init_fn, timeout, generator, persistent_workers or
      per-sample indexing (`loader[i]`, `.dataset[i]`).
    - shuffle=True (torch: False), drawn from (`seed`, epoch) rather than torch's global RNG: the same seed gives
      the same order in any process, for any worker count.
    - The defaults of seed, num_workers, prefetch_batches, max_seq_length, image_column, on_bad_sample,
      decoded_cache_mb and revision are the CLI's (`train --seed`, `--dataloader_num_workers`, ...: one owner,
      src/common/defaults.h, read from bridgetune._native.DEFAULTS; the signature shows the values).
    - num_workers (torch: 0) counts C++ threads, not processes (0: all work in the calling thread, as torch);
      prefetch_batches is the total ahead of the consumer (torch's prefetch_factor is per worker).
    - It shards itself as DistributedSampler would: rank/world_size default to torch.distributed's when it is
      initialised; drop_last also decides the sharding (False pads by wrapping around so every rank gets
      ceil(n / world_size) rows, True truncates), as DistributedSampler's drop_last does.
    - Mid-epoch resume is state_dict() / load_state_dict(), not accelerate's skip_first_batches (which rebuilds a
      torch DataLoader from per-sample indexing this loader does not have): with HF Trainer use
      bridgetune.hf.ContrastiveTrainer, which saves and restores the loader's state with each checkpoint (a plain
      Trainer needs TrainingArguments(ignore_data_skip=True) and the state restored by hand).
    - Wrapping it in torch.utils.data.DataLoader is refused (TypeError / RuntimeError naming the fix): every torch
      worker would yield the whole epoch again. Starting a new iteration invalidates the previous iterator
      (torch allows several at once).
    - transform="eval" and on_bad_sample="error" are this loader's own options (torch has neither), as are
      dedupe_images_in_batch and jpeg_dct_scaling, whose defaults (None) are `train`'s and `bench-loader`'s: a
      shuffled epoch keeps an image out of a batch twice where it can (a repeat is a false negative for a
      contrastive loss), and JPEGs decode at a reduced DCT scale when the result stays >= the crop
      (jpeg_dct_scaling=False: bit-exact with Pillow). max_image_pixels (None: `train --max_image_pixels`'s
      default, Pillow's MAX_IMAGE_PIXELS) refuses larger images from their header, and bounds a decode's memory.
    - data may be a list of datasets: they are mixed as `train --train_file A --train_file B` mixes them (HF's
      interleave_datasets: mix_weights are the probabilities, None round-robin; mix_stopping "first_exhausted" or
      "all_exhausted"), the same epoch order as the CLI's for the same seed; len() counts the mixed epoch.
    """

    def __init__(self, data, batch_size, num_workers=_DEFAULTS["num_workers"], shuffle=True,
                 seed=_DEFAULTS["seed"], drop_last=False, image_size=None, mean=None, std=None, preprocessor=None,
                 tokenizer=None, max_seq_length=_DEFAULTS["max_seq_length"], image_column=_DEFAULTS["image_column"],
                 caption_column=None, transform="eval", on_bad_sample=_DEFAULTS["on_bad_sample"], rank=None,
                 world_size=None, pin_memory=False, padding="longest", jpeg_dct_scaling=None,
                 prefetch_batches=_DEFAULTS["prefetch_batches"], decoded_cache_mb=_DEFAULTS["decoded_cache_mb"],
                 dedupe_images_in_batch=None, revision=_DEFAULTS["revision"], cache_dir=None, split=None,
                 data_config=None, data_revision=_DEFAULTS["revision"], max_image_pixels=None, mix_weights=None,
                 mix_stopping="first_exhausted"):
        o = _native.LoaderOptions()
        sources = data if isinstance(data, (list, tuple)) else [data]
        if not sources:
            raise ValueError("data: an empty list (give one dataset, or several to mix)")
        sources = [data_source(d, split, data_config, data_revision, cache_dir) for d in sources]
        o.data = sources[0]
        if len(sources) > 1:  # mixed as `train --train_file A --train_file B` (HF interleave_datasets)
            o.mix_data = sources
            o.mix_weights = [float(w) for w in mix_weights] if mix_weights is not None else []
            o.mix_stopping = _choice("mix_stopping", mix_stopping, ("first_exhausted", "all_exhausted"))
        elif mix_weights is not None:
            raise ValueError("mix_weights: give data as a list of several datasets to mix")
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
        if max_image_pixels is not None:  # None: the CLI's --max_image_pixels default (Pillow's)
            o.max_image_pixels = _positive_int("max_image_pixels", max_image_pixels)
        o.rank, o.world_size = _distributed_defaults(rank, world_size)
        o.prefetch_batches, o.decoded_cache_mb = int(prefetch_batches), int(decoded_cache_mb)
        if dedupe_images_in_batch is not None:  # None: the C++ default, as `train` and `bench-loader` have it
            o.dedupe_images_in_batch = bool(dedupe_images_in_batch)
        self._open(o, bool(pin_memory))
        if self.pin_memory and not _cuda_available():
            # torch warns the same way; said once, here, rather than on every epoch's iteration
            warnings.warn("bridgetune.DataLoader: pin_memory=True but CUDA is not available, so batches stay in "
                          "pageable memory; pass pin_memory=False to silence this", UserWarning, stacklevel=2)

    def _open(self, o, pin_memory):
        """The C++ loader for options `o` (fully resolved: paths, image settings, rank); shared by __init__ and
        unpickling, which must not resolve hub ids or torch.distributed again."""
        self._core = _native.Loader(o)
        self._opt = o
        self.batch_size, self.num_workers, self.pin_memory = o.batch_size, o.num_workers, pin_memory
        self.drop_last = o.drop_last
        self.dataset = Rows(o.data, self._core.dataset_size())
        self._epoch, self._resume = 0, 0  # the next iteration: epoch, and where it starts (load_state_dict)
        self._position = 0                # samples of the current epoch handed out so far
        self._generation = 0              # a new iteration invalidates older iterators
        self.last_batch_info = None       # epoch, index, first_sample, size, rows, image_keys, skipped of the last batch

    def __len__(self):
        """Batches per epoch of this rank: ceil(rows / batch_size), or floor with drop_last (as torch)."""
        return self._core.batches_per_epoch()

    # Pickling re-creates the loader from its resolved options (a spawned process opens the same files; nothing
    # of the C++ loader crosses) and carries state_dict(), so the copy goes on where the original stood.
    def __reduce__(self):
        o = self._opt
        options = {name: getattr(o, name) for name in dir(o) if not name.startswith("_")}
        return _unpickle, (options, self.pin_memory, self.state_dict())

    def __getitem__(self, index):
        # torch.utils.data.DataLoader(loader) takes this loader for a map-style dataset and indexes it per sample
        raise TypeError(_WRAPPED)

    @property
    def sampler(self):
        raise AttributeError(_NO_SAMPLER)

    @property
    def batch_sampler(self):
        raise AttributeError(_NO_SAMPLER)

    @property
    def epoch(self):
        return self._epoch

    def set_epoch(self, epoch):
        """Shuffle and augmentation seed of the next iteration (as DistributedSampler.set_epoch). The epoch a
        load_state_dict() left pending keeps its resume position: the resumed loop calls set_epoch(e) first."""
        epoch = int(epoch)
        if epoch != self._epoch or not self._resume:
            self._resume, self._position = 0, 0
        self._epoch = epoch

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
        """samples delivered, bad samples skipped (on_bad_sample="skip") and the first few reasons, cache use, and
        images decoded although libjpeg warned (decoded_with_warnings: decoded as Pillow decodes them)."""
        return self._core.stats()

    def __iter__(self):
        if _in_torch_worker():
            # Caught before the C++ loader starts: in a forked worker its threads and locks are copies.
            raise RuntimeError(_WRAPPED)
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


class Rows:
    """DataLoader.dataset: what the loader reads, for code that asks len(loader.dataset) (HF Trainer's example
    count, progress bars). len() is the dataset's rows, all ranks together (torch's len(dataset)); `data` is the
    source the C++ loader opened. It has no per-sample access: the loader decodes batches in C++."""

    def __init__(self, data, rows):
        self.data, self._rows = data, int(rows)

    def __len__(self):
        return self._rows

    def __getitem__(self, index):
        raise TypeError("bridgetune.DataLoader.dataset has no per-sample access (the loader decodes whole batches "
                        "in C++): iterate the DataLoader itself, or use bridgetune.preprocess for one image")

    def __repr__(self):
        return f"bridgetune.DataLoader.dataset({self.data!r}, rows={self._rows})"


_WRAPPED = ("bridgetune.DataLoader must not be wrapped in torch.utils.data.DataLoader: it already yields batches "
            "made by its own C++ worker threads, and each torch worker would yield the whole epoch again. Iterate "
            "it directly (`for batch in loader`) and set its num_workers instead of torch's")
_NO_SAMPLER = ("bridgetune.DataLoader has no sampler/batch_sampler to skip batches with (accelerate's "
               "skip_first_batches, HF Trainer's resume): save loader.state_dict() with the checkpoint and call "
               "loader.load_state_dict(state) before iterating again; with HF Trainer use "
               "bridgetune.hf.ContrastiveTrainer, which does both (a plain Trainer subclass also needs "
               "TrainingArguments(ignore_data_skip=True))")


def _unpickle(options, pin_memory, state):
    o = _native.LoaderOptions()
    for name, value in options.items():
        setattr(o, name, value)
    loader = DataLoader.__new__(DataLoader)
    loader._open(o, pin_memory)
    loader.load_state_dict(state)
    return loader


def _in_torch_worker():
    """True inside a torch.utils.data worker process. torch is only consulted when already imported: a worker
    always has it, and a plain `import bridgetune` should not pay for it."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.utils.data.get_worker_info() is not None


def _cuda_available():
    import torch

    return torch.cuda.is_available()
