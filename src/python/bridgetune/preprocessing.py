"""Model folders (tokenizer files + preprocessor_config.json), the tokenizer and the one-image transform.

A model folder is what Hugging Face's save_pretrained writes: tokenizer.json or vocab.json + merges.txt, config.json
and preprocessor_config.json (image_mean, image_std, size / crop_size). Wherever a folder is taken, a hub id
("org/name") works too: it is looked up offline in the local Hugging Face cache (cache_dir, else $HF_HUB_CACHE,
$HF_HOME/hub, ~/.cache/huggingface/hub) at `revision`, by the same C++ as the CLI's --model_name_or_path; anything
missing raises bridgetune.Error naming where it looked and the `huggingface-cli download ...` command.
"""
import os
import warnings

from . import _native

# The CLI's --model_revision / --dataset_revision default (common/defaults.h, exported by the native module).
_REVISION = _native.DEFAULTS["revision"]


def to_tensor(capsule):
    """A DLPack capsule from _native as a torch tensor sharing its memory (no copy)."""
    import torch.utils.dlpack

    return torch.utils.dlpack.from_dlpack(capsule)


def _positive_int(name, value):
    """value as an int >= 1, or ValueError naming the argument (bool and float are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int (got {value!r})")
    return value


def _hub(revision, cache_dir):
    return (_REVISION if revision is None else str(revision)), ("" if cache_dir is None else os.fspath(cache_dir))


def model_folder(name_or_path, what, revision=_REVISION, cache_dir=None):
    """The folder of a model: `name_or_path` itself when it is a folder, else the cache snapshot of hub id
    `name_or_path` (bridgetune.Error if neither)."""
    return _native.resolve_model(os.fspath(name_or_path), *_hub(revision, cache_dir), what)


def image_settings(preprocessor, revision=_REVISION, cache_dir=None):
    """(image_size, mean, std) a model folder or hub id asks for: with config.json, the model's vision image_size
    (its position embeddings are sized for it; a preprocessor_config.json size that differs is named on stderr) and
    preprocessor_config.json's image_mean/image_std (CLIP's without the file); with preprocessor_config.json alone,
    its crop size and mean/std."""
    size, mean, std = _native.image_settings(os.fspath(preprocessor), *_hub(revision, cache_dir))
    return size, list(mean), list(std)


def resolve_image_settings(image_size, mean, std, preprocessor, revision=_REVISION, cache_dir=None):
    """Explicit arguments win over the preprocessor folder, which wins over BridgeTower's defaults (288, CLIP)."""
    p_size, p_mean, p_std = (image_settings(preprocessor, revision, cache_dir) if preprocessor is not None
                             else (None, None, None))
    size = image_size or p_size or 288
    mean = list(mean if mean is not None else p_mean if p_mean is not None else _native.clip_mean())
    std = list(std if std is not None else p_std if p_std is not None else _native.clip_std())
    if len(mean) != 3 or len(std) != 3:
        raise ValueError(f"mean and std need 3 values each (got {mean!r}, {std!r})")
    return int(size), [float(x) for x in mean], [float(x) for x in std]


def data_source(data, split=None, data_config=None, data_revision=_REVISION, cache_dir=None):
    """What the C++ loader opens for `data`: a local path or pattern as it is; a hub dataset id ("org/name", or any
    name when split/data_config is given) becomes the parquet files of that split and config in the local cache,
    as `bridgetune evaluate --dataset_name` finds them (split defaults to "train")."""
    data = os.fspath(data)
    hub_id = not os.path.exists(data) and "/" in data and _native.is_repo_id(data)
    if split is None and data_config is None and not hub_id:
        return data
    revision, cache = _hub(data_revision, cache_dir)
    return _native.resolve_dataset(data, data_config or "", split or "train", revision, cache)


class Tokenizer:
    """RoBERTa byte-level BPE, identical to Hugging Face's RobertaTokenizerFast, from a model folder or hub id."""

    def __init__(self, name_or_path, revision=_REVISION, cache_dir=None):
        name, hub = os.fspath(name_or_path), _hub(revision, cache_dir)
        self._tok = _native.Tokenizer(name, *hub)
        self.path = _native.resolve_model(name, *hub, "tokenizer")  # the folder its files came from

    def encode(self, text, add_special_tokens=True, max_length=None):
        """Token ids (list of int) of one text; max_length truncates, keeping <s> ... </s>."""
        return self._tok.encode(text, add_special_tokens, max_length or 0)

    def encode_batch(self, texts, max_length=_native.DEFAULTS["max_seq_length"], padding="longest",
                     add_special_tokens=True):
        """{"input_ids", "attention_mask"}: int64 tensors [len(texts), L]; padding "longest" or "max_length"."""
        d = self._tok.encode_batch(list(texts), max_length, padding, add_special_tokens)
        return {k: to_tensor(v) for k, v in d.items()}

    def decode(self, ids, skip_special_tokens=False):
        return self._tok.decode([int(i) for i in ids], skip_special_tokens)

    @property
    def pad_token_id(self):
        return self._tok.pad_token_id

    def __len__(self):
        return self._tok.vocab_size


def preprocess(image, image_size=None, transform="eval", sample_seed=0, mean=None, std=None, preprocessor=None,
               jpeg_dct_scaling=None, revision=_REVISION, cache_dir=None, seed=None, max_image_pixels=None):
    """One image (encoded bytes, or a path) -> float32 tensor [3, S, S], exactly as the DataLoader makes it.

    transform "eval": resize the shortest edge (Pillow's bicubic) + center crop; "train": RandomResizedCrop +
    flip drawn from `sample_seed` (the DataLoader uses sample_seed(seed, epoch, row); `seed`, the old name of this
    argument, still works with a DeprecationWarning: everywhere else `seed` is a run's seed). jpeg_dct_scaling None: the CLI's default
    (on: a JPEG is decoded at a reduced DCT scale while the result stays >= the crop), False: bit-exact with Pillow. preprocessor: a model folder or hub id (at revision, in cache_dir) whose
    image size and mean/std apply (image_settings). max_image_pixels (None: the CLI's default, Pillow's): larger
    images are refused from their header, as the DataLoader and `train --max_image_pixels` do.
    """
    if seed is not None:
        warnings.warn("bridgetune.preprocess: `seed` is now `sample_seed` (a run's seed elsewhere)", DeprecationWarning,
                      stacklevel=2)
        sample_seed = seed
    size, mean, std = resolve_image_settings(image_size, mean, std, preprocessor, revision, cache_dir)
    if not isinstance(image, (bytes, bytearray, memoryview)):
        image = os.fspath(image)
    elif not isinstance(image, bytes):
        image = bytes(image)
    dct = -1 if jpeg_dct_scaling is None else int(bool(jpeg_dct_scaling))
    limits = {} if max_image_pixels is None else {"max_image_pixels": _positive_int("max_image_pixels", max_image_pixels)}
    return to_tensor(_native.preprocess(image, size, transform, int(sample_seed), dct, mean, std, **limits))


def sample_seed(seed, epoch, row):
    """The train transform's seed of dataset row `row` in `epoch` (pass it to preprocess to redo one sample)."""
    return _native.sample_seed(seed, epoch, row)
