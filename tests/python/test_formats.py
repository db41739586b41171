"""bridgetune.preprocess and the DataLoader read every format Pillow reads (WebP, GIF, BMP, TIFF, JPEGs with
libjpeg warnings; the corpus of tests/media/formats): within 1 level of torchvision on Image.open(f).convert("RGB"),
the format told by the bytes, not the file name; loose files and parquet image structs alike, and the loader's stats
count the images decoded through a libjpeg warning."""
import json
import os
import shutil
import sys

import torch
from PIL import Image
from torchvision import transforms as T
from torchvision.transforms import InterpolationMode

import bridgetune
from conftest import REPO

FORMATS = os.path.join(REPO, "tests", "media", "formats")
SIZE = 32


def corpus():
    with open(os.path.join(FORMATS, "manifest.txt")) as f:
        return [line.split()[0] for line in f if line.strip()]


def torchvision_eval(path):
    tv = T.Compose([T.Resize([SIZE], interpolation=InterpolationMode.BICUBIC), T.CenterCrop(SIZE), T.ToTensor(),
                    T.Normalize(bridgetune._native.clip_mean(), bridgetune._native.clip_std())])
    return tv(Image.open(path).convert("RGB"))


def levels(a, b):
    std = torch.tensor(bridgetune._native.clip_std()).view(3, 1, 1)
    return ((a - b).abs() * std * 255).numpy()  # difference in 8-bit levels


def test_preprocess_reads_every_format_as_pillow_and_torchvision():
    names = corpus()
    assert {n.rsplit(".", 1)[1] for n in names} == {"webp", "gif", "bmp", "tif", "jpg"}
    within = total = 0
    for name in names:
        path = os.path.join(FORMATS, name)
        d = levels(bridgetune.preprocess(path, image_size=SIZE, jpeg_dct_scaling=False), torchvision_eval(path))
        assert (d <= 1.0 + 1e-3).mean() >= 0.999, name
        within += int((d <= 1.0 + 1e-3).sum())
        total += d.size
    assert within / total >= 0.999


def test_data_loader_reads_them_whatever_the_file_is_named(tmp_path):
    names = [n for n in corpus() if n.split(".")[0] in ("lossy", "animated", "rle8", "ycbcr_jpeg", "extraneous4")]
    assert len(names) >= 5
    (tmp_path / "images").mkdir()
    rows = []
    for i, name in enumerate(names):
        shutil.copy(os.path.join(FORMATS, name), tmp_path / "images" / f"{i}.jpg")  # the name lies on purpose
        rows.append({"image": f"images/{i}.jpg", "caption": name})
    (tmp_path / "captions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    loader = bridgetune.DataLoader(str(tmp_path), batch_size=len(names), image_size=SIZE, shuffle=False,
                                   jpeg_dct_scaling=False)
    (batch,) = list(loader)
    for j, r in enumerate(loader.last_batch_info["rows"]):
        path = os.path.join(FORMATS, rows[r]["caption"])
        assert torch.equal(batch["pixel_values"][j], bridgetune.preprocess(path, image_size=SIZE, jpeg_dct_scaling=False))
        assert (levels(batch["pixel_values"][j], torchvision_eval(path)) <= 1.0 + 1e-3).mean() >= 0.999
    assert loader.stats["decoded_with_warnings"] == 1  # extraneous4.jpg, decoded as Pillow decodes it


def test_parquet_image_structs_in_every_format(tmp_path):
    sys.path.insert(0, os.path.join(REPO, "tests", "parquet"))
    from minimal_writer import IMAGE, STRING, write_parquet
    names = corpus()
    rows = []
    for i, name in enumerate(names):
        with open(os.path.join(FORMATS, name), "rb") as f:  # an HF image struct; the path's extension lies
            rows.append({"image": {"bytes": f.read(), "path": f"{i}.png"}, "caption": name})
    path = tmp_path / "train-00000-of-00001.parquet"
    write_parquet(str(path), [("image", IMAGE), ("caption", STRING)], rows)
    loader = bridgetune.DataLoader(str(path), batch_size=len(names), image_size=SIZE, shuffle=False,
                                   caption_column="caption", jpeg_dct_scaling=False, drop_last=False)
    (batch,) = list(loader)
    assert sorted(batch["captions"]) == sorted(names)
    for j, name in enumerate(batch["captions"]):
        want = bridgetune.preprocess(os.path.join(FORMATS, name), image_size=SIZE, jpeg_dct_scaling=False)
        assert torch.equal(batch["pixel_values"][j], want), name
    assert loader.stats["decoded_with_warnings"] == sum(n.startswith("extraneous") for n in names) == 4
