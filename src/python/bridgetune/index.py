"""An embedding index written by `bridgetune encode`, loaded for use in Python.

    idx = bridgetune.load_index("runs/index")
    scores = idx.image_embeds @ text_vector          # cosines: the rows are L2-normalised
    print(idx.images[int(scores.argmax())])

The files (see `bridgetune encode --help`): image_embeds.npy [N, D] float32 with images.jsonl (one {"image", "row"}
per row), text_embeds.npy [T, D] with texts.jsonl when the data had captions, and index.json.
"""
import json
import os
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np


@dataclass
class Index:
    image_embeds: "object"                 # torch.Tensor [N, D] (a numpy array when torch is missing)
    images: List[str]                       # the image key of each row
    text_embeds: Optional["object"] = None  # [T, D], or None without captions
    texts: List[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)  # index.json: model, data, dims, counts, transform


def _lines(path, key):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)[key] for line in f if line.strip()]


def _matrix(path, rows, as_torch):
    m = np.load(path, allow_pickle=False)
    if m.dtype != np.float32 or m.ndim != 2 or m.shape[0] != rows:
        raise ValueError(f"{path}: expected float32 [{rows}, D] (its keys file has {rows} lines), got "
                         f"{m.dtype} {list(m.shape)}")
    if as_torch:
        import torch
        return torch.from_numpy(m)
    return m


def load_index(folder, as_torch=True):
    """The index in `folder` as an Index; embeddings as torch tensors (numpy arrays with as_torch=False)."""
    info_path = os.path.join(folder, "index.json")
    if not os.path.isfile(info_path):
        raise FileNotFoundError(f"{folder}: no index.json in it (make one with `bridgetune encode`)")
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    images = _lines(os.path.join(folder, "images.jsonl"), "image")
    idx = Index(_matrix(os.path.join(folder, "image_embeds.npy"), len(images), as_torch), images, info=info)
    if os.path.isfile(os.path.join(folder, "text_embeds.npy")):
        idx.texts = _lines(os.path.join(folder, "texts.jsonl"), "text")
        idx.text_embeds = _matrix(os.path.join(folder, "text_embeds.npy"), len(idx.texts), as_torch)
    return idx
