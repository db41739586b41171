"""Shared fixtures of the Python module's tests: the build folder, generated data, a tokenizer folder.

Run from the repository root after the build: PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
(BT_BUILD_DIR names another build folder). Data comes from `bridgetune synth`, small images so the suite stays fast.
"""
import json
import os
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
