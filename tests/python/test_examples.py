"""The examples run: the plain torch loop trains a few steps; the HF Trainer example compiles and runs its loader
part (transformers is not installable here)."""
import json
import os
import py_compile
import subprocess
import sys

import torch

from conftest import REPO

EXAMPLES = os.path.join(REPO, "examples")


def run(script, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_train_loop(data_dir, tokenizer_dir, tmp_path):
    ckpt = tmp_path / "ckpt.pt"
    out = run("train_loop.py", "--data", data_dir, "--tokenizer", tokenizer_dir, "--steps", 6, "--batch_size", 16,
              "--image_size", 64, "--checkpoint", ckpt)
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("epoch")]
    assert len(losses) == 6 and all(l == l and l > 0 for l in losses)  # finite, positive
    state = torch.load(ckpt)["loader"]
    assert state["epoch"] == 1 and state["position"] == 32  # 4 batches in epoch 0, 2 into epoch 1


def test_hf_trainer_compiles_and_its_loader_runs(data_dir, tokenizer_dir, tmp_path):
    py_compile.compile(os.path.join(EXAMPLES, "hf_trainer.py"), cfile=str(tmp_path / "hf.pyc"), doraise=True)
    out = run("hf_trainer.py", "--loader_only", "--data", data_dir, "--tokenizer", tokenizer_dir,
              "--per_device_train_batch_size", 16, "--image_size", 64)
    assert "4 batches; last:" in out and "'pixel_values': (16, 3, 64, 64)" in out


def test_hf_trainer_loader_from_hub_ids(data_dir, hub):
    """The model by hub id: its tokenizer and preprocessor_config.json (the model's image_size 64), offline."""
    out = run("hf_trainer.py", "--loader_only", "--data", data_dir, "--model_name_or_path", "bt-test/tiny",
              "--cache_dir", hub, "--per_device_train_batch_size", 16)
    assert "4 batches; last:" in out and "'pixel_values': (16, 3, 64, 64)" in out


def test_examples_skip_bad_samples_when_asked(data_dir, tokenizer_dir, tmp_path):
    """Issue 57: one unreadable image stops an example unless --on_bad_sample skip (then it is counted)."""
    import shutil
    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    first = json.loads(open(data / "captions.jsonl").readline())["image"]
    (data / first).write_bytes(b"not an image")
    args = ["--data", data, "--tokenizer", tokenizer_dir, "--steps", 4, "--batch_size", 16, "--image_size", 64,
            "--num_workers", 0]
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_loop.py"), *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and first in r.stderr, r.stderr
    out = run("train_loop.py", *args, "--on_bad_sample", "skip")
    assert "bad samples skipped (--on_bad_sample skip)" in out, out
    out = run("hf_trainer.py", "--loader_only", "--data", data, "--tokenizer", tokenizer_dir,
              "--per_device_train_batch_size", 16, "--image_size", 64, "--on_bad_sample", "skip")
    assert "4 batches; last:" in out and "bad samples skipped" in out and "; 0 bad" not in out, out
