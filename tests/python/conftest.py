"""Shared fixtures of the Python module's tests: the build folder, generated data, a tokenizer folder.

Run from the repository root after the build: PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
(BT_BUILD_DIR names another build folder). Data comes from `bridgetune synth`, small images so the suite stays fast.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("BT_BUILD_DIR", os.path.join(REPO, "build")))
BRIDGETUNE = os.path.join(BUILD, "bridgetune")
TOKENIZER_DIR = os.path.join(REPO, "tests", "text", "fixtures", "tiny")
# The module under test, for this process and the scripts it starts.
sys.path.insert(0, os.path.join(BUILD, "python"))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(BUILD, "python"), os.environ.get("PYTHONPATH")]))
# What bridgetune caches for the user (the CPU peak behind MFU, model/flops_peak.h): the build's, never ~/.cache.
os.environ["XDG_CACHE_HOME"] = os.path.join(BUILD, "test_xdg_cache")


def run_cli(*args):
    r = subprocess.run([BRIDGETUNE, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"bridgetune {' '.join(map(str, args))} failed: {r.stderr}"
    return r.stdout


def synth(out, n, images, min_width=320, max_width=480, tar=False):
    args = ["synth", "--out", out, "--n", n, "--images", images, "--min_width", min_width, "--max_width", max_width,
            "--seed", 7, "--threads", 1]
    run_cli(*args, *(["--tar", "--shard_size", 32] if tar else []))
    return str(out)


def read_rows(folder):
    """The rows of a synth folder's captions.jsonl, in file order (the loader's row numbers)."""
    with open(os.path.join(folder, "captions.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """64 rows over 48 images, 320-480 px wide."""
    return synth(tmp_path_factory.mktemp("synth"), 64, 48)


@pytest.fixture(scope="session")
def tokenizer_dir():
    return TOKENIZER_DIR


# A fake Hugging Face hub cache, laid out as huggingface_hub writes it: <kind>s--org--name/refs/<rev> holds the commit
# of snapshots/<commit>/.
HUB_MAIN = "1234567890abcdef1234567890abcdef12345678"
HUB_V1 = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
HUB_MEAN, HUB_STD = [0.25, 0.5, 0.75], [0.125, 0.25, 0.5]
FIXTURE = os.path.join(REPO, "tests", "fixtures", "bridgetower-tiny")  # vision image_size 64


def snapshot(root, kind, repo, commit=HUB_MAIN, ref="main"):
    d = root / f"{kind}s--{repo.replace('/', '--')}"
    (d / "refs").mkdir(parents=True, exist_ok=True)
    (d / "refs" / ref).write_text(commit)
    s = d / "snapshots" / commit
    s.mkdir(parents=True, exist_ok=True)
    return s


def model_files(d, tokenizer_dir, mean, std, size=288):
    """config.json (image_size 64), preprocessor_config.json saying `size` (as a larger model's would), tokenizer."""
    shutil.copy(os.path.join(FIXTURE, "config.json"), d)
    (d / "preprocessor_config.json").write_text(json.dumps(
        {"image_processor_type": "BridgeTowerImageProcessor", "size": {"shortest_edge": size}, "image_mean": mean,
         "image_std": std}))
    for f in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(tokenizer_dir, f), d)


@pytest.fixture(scope="session")
def hub(tmp_path_factory, tokenizer_dir):
    """A fake Hugging Face cache: model bt-test/tiny (main: HUB_MEAN/HUB_STD; ref v1: 0.5/0.5), a partial download
    bt-test/partial (config.json only), dataset bt-test/caps (data/train-*.parquet, 11 rows)."""
    root = tmp_path_factory.mktemp("hf") / "hub"
    model_files(snapshot(root, "model", "bt-test/tiny"), tokenizer_dir, HUB_MEAN, HUB_STD)
    model_files(snapshot(root, "model", "bt-test/tiny", HUB_V1, "v1"), tokenizer_dir, [0.5] * 3, [0.5] * 3)
    (snapshot(root, "model", "bt-test/partial") / "config.json").write_text("{}")  # a partial download
    data = snapshot(root, "dataset", "bt-test/caps") / "data"
    data.mkdir()
    shutil.copy(os.path.join(REPO, "tests", "parquet", "fixtures", "images_snappy_dict_v1.parquet"),
                data / "train-00000-of-00001.parquet")
    return str(root)
