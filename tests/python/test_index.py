"""bridgetune.load_index: what `bridgetune encode` writes, as tensors and keys (issue 28)."""
import json
import os
import shutil

import numpy as np
import pytest
import torch

import bridgetune
from conftest import FIXTURE, run_cli, synth


@pytest.fixture(scope="module")
def index(tmp_path_factory, tokenizer_dir):
    root = tmp_path_factory.mktemp("index")
    data = synth(root / "data", 12, 4, min_width=96, max_width=128)
    model = root / "model"  # the tiny HF fixture (random weights) with a tokenizer
    model.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(FIXTURE, f), model)
    for f in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(tokenizer_dir, f), model)
    run_cli("encode", "--model_name_or_path", model, "--data", data, "--output_dir", root / "idx",
            "--dataloader_num_workers", 0)
    return str(root / "idx")


def test_the_index_loads_as_tensors_with_its_keys(index):
    idx = bridgetune.load_index(index)
    assert isinstance(idx.image_embeds, torch.Tensor) and idx.image_embeds.dtype == torch.float32
    assert idx.image_embeds.shape[0] == len(idx.images) == 4  # 12 rows share 4 pictures
    assert idx.text_embeds.shape == (len(idx.texts), idx.image_embeds.shape[1])
    assert torch.allclose(idx.image_embeds.norm(dim=1), torch.ones(4), atol=1e-4)  # cosines by dot product
    with open(os.path.join(index, "images.jsonl")) as f:
        assert idx.images == [json.loads(line)["image"] for line in f]
    assert idx.info["images"] == 4
    assert isinstance(bridgetune.load_index(index, as_torch=False).image_embeds, np.ndarray)


def test_a_folder_without_an_index_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="bridgetune encode"):
        bridgetune.load_index(str(tmp_path))
