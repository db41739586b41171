"""Errors arrive as Python exceptions naming the file; bridgetune.preprocess and the eval transform against
torchvision; the tokenizer against the `bridgetune tokenize` command."""
import json
import os
import pickle
import shutil
import subprocess

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode

import bridgetune
from conftest import BRIDGETUNE, read_rows


@pytest.fixture(scope="module")
def bad_dir(data_dir, tmp_path_factory):
    """16 rows; row 5's image is not a JPEG."""
    out = tmp_path_factory.mktemp("bad")
    rows = read_rows(data_dir)[:16]
    (out / "images").mkdir()
    for i, r in enumerate(rows):
        dst = f"images/{i}.jpg"
        if i == 5:
            (out / dst).write_bytes(b"\xff\xd8 this is not a jpeg")
        else:
            shutil.copy(os.path.join(data_dir, r["image"]), out / dst)
        r["image"] = dst
    (out / "captions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(out)


def test_bad_sample_raises_naming_the_file(bad_dir):
    loader = bridgetune.DataLoader(bad_dir, batch_size=4, image_size=32, shuffle=False)
    it = iter(loader)
    next(it)  # rows 0-3 are fine
    with pytest.raises(bridgetune.Error, match=r"images/5\.jpg") as e:
        next(it)
    assert isinstance(e.value, RuntimeError)


def test_bad_sample_skipped_and_counted(bad_dir):
    loader = bridgetune.DataLoader(bad_dir, batch_size=4, image_size=32, on_bad_sample="skip")
    batches = list(loader)
    assert len(batches) == 4 and all(b["pixel_values"].shape[0] == 4 for b in batches)
    stats = loader.stats
    assert stats["skipped"] == 1 and "5.jpg" in stats["first_skipped"][0]


def test_bad_arguments_raise(data_dir, tmp_path):
    with pytest.raises(bridgetune.Error, match="no-such-folder"):
        bridgetune.DataLoader(str(tmp_path / "no-such-folder"), batch_size=4)
    with pytest.raises(ValueError, match="transform"):
        bridgetune.DataLoader(data_dir, batch_size=4, transform="random")
    with pytest.raises(bridgetune.Error, match="batch_size"):
        bridgetune.DataLoader(data_dir, batch_size=0)
    with pytest.raises(bridgetune.Error, match="rank"):
        bridgetune.DataLoader(data_dir, batch_size=4, rank=2, world_size=2)
    with pytest.raises(bridgetune.Error, match="tokenizer .*nope: no such folder"):
        bridgetune.DataLoader(data_dir, batch_size=4, tokenizer=str(tmp_path / "nope"))
    with pytest.raises(bridgetune.Error, match="not-an-image"):
        bad = tmp_path / "not-an-image.png"
        bad.write_bytes(b"\x89PNG\r\n\x1a\n garbage")
        bridgetune.preprocess(str(bad))


def test_preprocess_bytes_path_and_preprocessor_folder(data_dir, tmp_path):
    image = os.path.join(data_dir, read_rows(data_dir)[0]["image"])
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
    a = bridgetune.preprocess(image, image_size=80, mean=mean, std=std)
    with open(image, "rb") as f:
        b = bridgetune.preprocess(f.read(), image_size=80, mean=mean, std=std)
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(
        {"crop_size": {"height": 80, "width": 80}, "image_mean": mean, "image_std": std}))
    c = bridgetune.preprocess(image, preprocessor=str(tmp_path))
    assert a.shape == (3, 80, 80) and a.dtype == torch.float32
    assert torch.equal(a, b) and torch.equal(a, c)
    # The same settings through the loader give the same pixels.
    loader = bridgetune.DataLoader(data_dir, batch_size=4, shuffle=False, preprocessor=str(tmp_path))
    assert torch.equal(next(iter(loader))["pixel_values"][0], a)
    default = bridgetune.preprocess(image, image_size=80)
    assert not torch.equal(default, a)


def test_max_image_pixels_refuses_larger_images_in_preprocess_and_loader(data_dir):
    image = os.path.join(data_dir, read_rows(data_dir)[0]["image"])  # synth's images are >= 320 px wide
    assert bridgetune.preprocess(image, image_size=64, max_image_pixels=10**7).shape == (3, 64, 64)
    with pytest.raises(bridgetune.Error, match="max_image_pixels"):
        bridgetune.preprocess(image, image_size=64, max_image_pixels=1000)
    with pytest.raises(ValueError, match="max_image_pixels must be a positive int"):
        bridgetune.preprocess(image, image_size=64, max_image_pixels=0)
    loader = bridgetune.DataLoader(data_dir, batch_size=2, num_workers=0, image_size=64, max_image_pixels=1000)
    with pytest.raises(bridgetune.Error, match="max_image_pixels"):
        next(iter(loader))
    skipping = bridgetune.DataLoader(data_dir, batch_size=2, num_workers=0, image_size=64, max_image_pixels=1000,
                                     on_bad_sample="skip", shuffle=False)
    with pytest.raises(bridgetune.Error, match="max_image_pixels 1000 .*replacement candidates were bad too"):
        next(iter(skipping))  # every image is over the cap: skipping cannot fill a batch, and says why
    assert pickle.loads(pickle.dumps(loader))._opt.max_image_pixels == 1000  # a spawned copy keeps the cap


def test_eval_transform_matches_torchvision(data_dir):
    size = 288
    tv = T.Compose([T.Resize(size, interpolation=InterpolationMode.BICUBIC), T.CenterCrop(size), T.ToTensor(),
                    T.Normalize(bridgetune._native.clip_mean(), bridgetune._native.clip_std())])
    std = torch.tensor(bridgetune._native.clip_std()).view(3, 1, 1)
    within = total = 0
    for r in read_rows(data_dir)[:4]:
        path = os.path.join(data_dir, r["image"])
        ours = bridgetune.preprocess(path, image_size=size, jpeg_dct_scaling=False)
        theirs = tv(Image.open(path).convert("RGB"))
        levels = ((ours - theirs).abs() * std * 255).numpy()  # difference in 8-bit levels
        within += int((levels <= 1.0 + 1e-3).sum())
        total += levels.size
    assert within / total >= 0.999, f"only {100 * within / total:.3f} % of pixels within 1 level"


def test_tokenizer_matches_the_cli(tokenizer_dir, tmp_path):
    texts = ["the dog", "a bad cat", "the the dog ab"]
    r = subprocess.run([BRIDGETUNE, "tokenize", "--tokenizer_dir", tokenizer_dir], input="\n".join(texts) + "\n",
                       capture_output=True, text=True, check=True)
    tok = bridgetune.Tokenizer(tokenizer_dir)
    ids = [tok.encode(t) for t in texts]
    assert ids == [json.loads(line) for line in r.stdout.splitlines()]
    assert ids[0][0] == 0 and ids[0][-1] == 2 and tok.decode(ids[0], skip_special_tokens=True) == "the dog"
    enc = tok.encode_batch(texts, max_length=6, padding="max_length")
    assert tuple(enc["input_ids"].shape) == (3, 6) and enc["input_ids"].dtype == torch.int64
    for row, want in zip(enc["input_ids"].tolist(), ids):
        n = min(len(want), 6)
        assert row[:n - 1] == want[:n - 1] and row[n - 1] == 2
        assert row[n:] == [tok.pad_token_id] * (6 - n)


def test_defaults_are_the_clis(data_dir):
    """DCT scaling and the in-batch dedupe default to what `train` and `bench-loader` use (issue 26)."""
    path = os.path.join(data_dir, read_rows(data_dir)[0]["image"])
    default = bridgetune.preprocess(path, image_size=96)  # >= 2x smaller than the image: a reduced DCT scale
    assert torch.equal(default, bridgetune.preprocess(path, image_size=96, jpeg_dct_scaling=True))
    assert not torch.equal(default, bridgetune.preprocess(path, image_size=96, jpeg_dct_scaling=False))
    rows = read_rows(data_dir)
    for dedupe, expect_repeats in ((None, False), (False, True)):
        loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=32, seed=3,
                                       dedupe_images_in_batch=dedupe)
        repeats = 0
        for _epoch in range(3):
            for _ in loader:
                keys = [rows[r]["image"] for r in loader.last_batch_info["rows"]]
                repeats += len(keys) - len(set(keys))
        assert (repeats > 0) == expect_repeats, (dedupe, repeats)
    # The run seed is train's --seed default; preprocess's per-sample seed has its own name (the old one warns).
    assert bridgetune.DataLoader(data_dir, batch_size=8, image_size=32).state_dict()["seed"] == 42
    with pytest.warns(DeprecationWarning):
        old = bridgetune.preprocess(path, image_size=96, transform="train", seed=5)
    assert torch.equal(old, bridgetune.preprocess(path, image_size=96, transform="train", sample_seed=5))


def test_an_interpreter_without_numpy_is_told_which_one_the_build_is_for():
    """Imported by another python3 (a pyenv one on PATH, say) that lacks numpy: one line naming both interpreters,
    not a bare ModuleNotFoundError."""
    import sys
    from bridgetune import _build
    code = ("import sys\nsys.modules['numpy'] = None  # as if this interpreter had none\n"
            "try:\n    import bridgetune\nexcept ImportError as e:\n    print(e)\nelse:\n    print('imported')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    message = p.stdout.strip()
    assert "\n" not in message, message
    assert "no module named numpy" in message, message
    assert f"it was built for {_build.PYTHON}" in message, message
    assert sys.executable in message, message
