"""Hub ids for tokenizer= / preprocessor= / data=, resolved offline in a fake Hugging Face cache built at test time
(conftest.hub) by the CLI's C++; and a model folder's preprocessor_config.json mean/std normalising the pixels."""
import os

import numpy as np
import pytest
import torch

import bridgetune
from conftest import HUB_MEAN as MEAN, HUB_STD as STD, HUB_MAIN as MAIN, HUB_V1 as V1, read_rows, run_cli


def scaled(data_dir, size, n=4):
    """x / 255 of the first n rows' eval crops, float32 [n,3,S,S] (mean 0, std 1)."""
    rows = read_rows(data_dir)[:n]
    return torch.stack([bridgetune.preprocess(os.path.join(data_dir, r["image"]), image_size=size, mean=[0, 0, 0],
                                              std=[1, 1, 1]) for r in rows])


def normalised(x, mean, std):
    mean, std = (torch.tensor(v, dtype=torch.float32).view(3, 1, 1) for v in (mean, std))
    return (x - mean) / std


def test_hub_ids_for_tokenizer_and_preprocessor(data_dir, tokenizer_dir, hub, capfd, tmp_path):
    loader = bridgetune.DataLoader(data_dir, batch_size=4, shuffle=False, tokenizer="bt-test/tiny",
                                   preprocessor="bt-test/tiny", cache_dir=hub, max_seq_length=16)
    batch = next(iter(loader))
    # The model's vision image_size (64), not the file's 288, said once on stderr; the file's mean/std.
    assert tuple(batch["pixel_values"].shape) == (4, 3, 64, 64)
    assert "resizes to 288 and crops to 288, but the model's vision image_size is 64" in capfd.readouterr().err
    assert torch.equal(batch["pixel_values"], normalised(scaled(data_dir, 64), MEAN, STD))
    local = bridgetune.Tokenizer(tokenizer_dir).encode_batch([r["caption"] for r in read_rows(data_dir)[:4]], 16)
    assert torch.equal(batch["input_ids"], local["input_ids"])
    image = os.path.join(data_dir, read_rows(data_dir)[0]["image"])
    one = bridgetune.preprocess(image, preprocessor="bt-test/tiny", cache_dir=hub)
    assert torch.equal(one, batch["pixel_values"][0])
    # `bridgetune preprocess --model_name_or_path` makes the same tensor.
    run_cli("preprocess", image, "--model_name_or_path", "bt-test/tiny", "--cache_dir", hub, "--out", tmp_path / "o.npy")
    assert torch.equal(torch.from_numpy(np.load(tmp_path / "o.npy")), one)
    # HF_HUB_CACHE is honoured as huggingface_hub does; a revision (ref or commit) picks another snapshot.
    os.environ["HF_HUB_CACHE"] = hub
    try:
        tok = bridgetune.Tokenizer("bt-test/tiny")
        assert tok.path.endswith(MAIN) and len(tok) == len(bridgetune.Tokenizer(tokenizer_dir))
        for rev in ("v1", V1):
            v1 = bridgetune.preprocess(image, preprocessor="bt-test/tiny", revision=rev)
            assert torch.equal(v1, normalised(scaled(data_dir, 64, 1)[0], [0.5] * 3, [0.5] * 3))
    finally:
        del os.environ["HF_HUB_CACHE"]


def test_missing_hub_repos_and_files_name_the_download_command(data_dir, hub, tmp_path):
    with pytest.raises(bridgetune.Error, match=r"tokenizer bt-test/nope: .*huggingface-cli download bt-test/nope"):
        bridgetune.DataLoader(data_dir, batch_size=4, tokenizer="bt-test/nope", cache_dir=hub)
    with pytest.raises(bridgetune.Error, match=r"revision 'v2' .*huggingface-cli download bt-test/tiny --revision v2"):
        bridgetune.preprocess(b"", preprocessor="bt-test/tiny", revision="v2", cache_dir=hub)
    with pytest.raises(bridgetune.Error, match=r"bt-test/partial: .*huggingface-cli download bt-test/partial`"):
        bridgetune.Tokenizer("bt-test/partial", cache_dir=hub)
    with pytest.raises(bridgetune.Error, match=r"no such folder, and not a Hugging Face hub id"):
        bridgetune.Tokenizer(str(tmp_path / "nope"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "preprocessor_config.json").write_text('{"image_mean": [0.5, 0.5]}')
    with pytest.raises(bridgetune.Error, match=r"preprocessor_config.json: \"image_mean\" must be a list of 3 numbers"):
        bridgetune.DataLoader(data_dir, batch_size=4, preprocessor=str(bad))


def test_hub_dataset_split(hub):
    loader = bridgetune.DataLoader("bt-test/caps", batch_size=4, image_size=32, caption_column="image_description",
                                   drop_last=False, shuffle=False, cache_dir=hub)
    assert sum(len(b["captions"]) for b in loader) == 11
    same = bridgetune.DataLoader("bt-test/caps", split="train", data_config="default", batch_size=4, image_size=32,
                                 caption_column="image_description", drop_last=False, shuffle=False, cache_dir=hub)
    assert [b["captions"] for b in same] == [b["captions"] for b in loader]
    with pytest.raises(bridgetune.Error, match=r"split test: .* has no such split \(splits: train\)"):
        bridgetune.DataLoader("bt-test/caps", split="test", batch_size=4, cache_dir=hub)
    with pytest.raises(bridgetune.Error, match=r"huggingface-cli download --repo-type dataset bt-test/none"):
        bridgetune.DataLoader("bt-test/none", batch_size=4, cache_dir=hub)


def test_tokenize_takes_a_hub_id(hub, tokenizer_dir):
    """`tokenize --tokenizer_dir` resolves hub ids like every other command (issue 26 item 7)."""
    import subprocess
    from conftest import BRIDGETUNE
    env = dict(os.environ, HF_HUB_CACHE=hub)
    by_id = subprocess.run([BRIDGETUNE, "tokenize", "--tokenizer_dir", "bt-test/tiny"], input="a cat\n",
                           capture_output=True, text=True, env=env)
    by_dir = subprocess.run([BRIDGETUNE, "tokenize", "--tokenizer_dir", tokenizer_dir], input="a cat\n",
                            capture_output=True, text=True)
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == by_dir.stdout and by_id.stdout.startswith("[0, ")
