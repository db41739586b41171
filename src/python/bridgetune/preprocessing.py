"""Model folders (tokenizer files + preprocessor_config.json), the tokenizer and the one-image transform.

A model folder is what Hugging Face's save_pretrained writes: tokenizer.json or vocab.json + merges.txt, and
preprocessor_config.json (image_mean, image_std, size / crop_size). Hub ids are not resolved here yet: pass the
folder a hub download produced.
"""
import json
import os

from . import _native


def to_tensor(capsule):
    """A DLPack capsule from _native as a torch tensor sharing its memory (no copy)."""
    import torch.utils.dlpack

    return torch.utils.dlpack.from_dlpack(capsule)


def _model_folder(path, what):
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ValueError(f"{what} {path!r}: no such folder (give a model folder with tokenizer files / "
                         "preprocessor_config.json; hub ids are not resolved by this version)")
    return path


def image_settings(preprocessor):
    """(image_size, mean, std) from a model folder's preprocessor_config.json; None where it says nothing."""
    folder = _model_folder(preprocessor, "preprocessor")
    path = os.path.join(folder, "preprocessor_config.json")
    try:
        with open(path) as f:
            cfg = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    size = cfg.get("crop_size") or cfg.get("size")
    if isinstance(size, dict):
        size = size.get("height") or size.get("shortest_edge")
    if size is not None and not isinstance(size, int):
        raise ValueError(f"{path}: crop_size/size must be an int or {{'height': int}} (got {size!r})")
    mean, std = cfg.get("image_mean"), cfg.get("image_std")
    for name, v in (("image_mean", mean), ("image_std", std)):
        if v is not None and (not isinstance(v, list) or len(v) != 3):
            raise ValueError(f"{path}: {name} must be a list of 3 numbers (got {v!r})")
    return size, mean, std


def resolve_image_settings(image_size, mean, std, preprocessor):
    """Explicit arguments win over the preprocessor folder, which wins over BridgeTower's defaults (288, CLIP)."""
    p_size, p_mean, p_std = image_settings(preprocessor) if preprocessor is not None else (None, None, None)
    size = image_size or p_size or 288
    mean = list(mean if mean is not None else p_mean if p_mean is not None else _native.clip_mean())
    std = list(std if std is not None else p_std if p_std is not None else _native.clip_std())
    if len(mean) != 3 or len(std) != 3:
        raise ValueError(f"mean and std need 3 values each (got {mean!r}, {std!r})")
    return int(size), [float(x) for x in mean], [float(x) for x in std]


class Tokenizer:
    """RoBERTa byte-level BPE, identical to Hugging Face's RobertaTokenizerFast, from a model folder."""

    def __init__(self, path):
        self._tok = _native.Tokenizer(_model_folder(path, "tokenizer"))
        self.path = os.fspath(path)

    def encode(self, text, add_special_tokens=True, max_length=None):
        """Token ids (list of int) of one text; max_length truncates, keeping <s> ... </s>."""
        return self._tok.encode(text, add_special_tokens, max_length or 0)

    def encode_batch(self, texts, max_length=128, padding="longest", add_special_tokens=True):
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


def preprocess(image, image_size=None, transform="eval", seed=0, mean=None, std=None, preprocessor=None,
               jpeg_dct_scaling=None):
    """One image (encoded bytes, or a path) -> float32 tensor [3, S, S], exactly as the DataLoader makes it.

    transform "eval": resize the shortest edge (Pillow's bicubic) + center crop; "train": RandomResizedCrop +
    flip drawn from `seed` (the DataLoader uses sample_seed(seed, epoch, row)). jpeg_dct_scaling None: off for eval
    (bit-exact with Pillow), on for train.
    """
    size, mean, std = resolve_image_settings(image_size, mean, std, preprocessor)
    if not isinstance(image, (bytes, bytearray, memoryview)):
        image = os.fspath(image)
    elif not isinstance(image, bytes):
        image = bytes(image)
    dct = -1 if jpeg_dct_scaling is None else int(bool(jpeg_dct_scaling))
    return to_tensor(_native.preprocess(image, size, transform, int(seed), dct, mean, std))


def sample_seed(seed, epoch, row):
    """The train transform's seed of dataset row `row` in `epoch` (pass it to preprocess to redo one sample)."""
    return _native.sample_seed(seed, epoch, row)
