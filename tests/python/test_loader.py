"""bridgetune.DataLoader: batches equal the C++ pipeline's byte for byte, torch's idiom (len, set_epoch, exact
mid-epoch resume), tensors that outlive the loader, and memory that stays flat over epochs."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import bridgetune
from conftest import BRIDGETUNE, read_rows, run_cli


def cpp_preprocess(tmp_path, image, size, transform="eval", seed=0):
    """The `bridgetune preprocess` command's float CHW output for one image."""
    out = tmp_path / f"{transform}-{seed}.npy"
    run_cli("preprocess", image, "--image_size", size, "--transform", transform, "--sample_seed", seed, "--format", "f32",
            "--out", out)
    return np.load(out)


def test_batch_layout_with_tokenizer(data_dir, tokenizer_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=64, tokenizer=tokenizer_dir,
                                   max_seq_length=12)
    assert len(loader) == 4
    batches = list(loader)
    assert len(batches) == 4
    b = batches[0]
    assert sorted(b) == ["attention_mask", "input_ids", "pixel_values"]
    assert b["pixel_values"].dtype == torch.float32 and tuple(b["pixel_values"].shape) == (16, 3, 64, 64)
    assert b["input_ids"].dtype == torch.int64 and b["input_ids"].shape[0] == 16
    assert b["input_ids"].shape == b["attention_mask"].shape and b["input_ids"].shape[1] <= 12
    # The ids are the tokenizer's for the captions of the batch's rows.
    rows = read_rows(data_dir)
    captions = [rows[r]["caption"] for r in loader.last_batch_info["rows"]]
    want = bridgetune.Tokenizer(tokenizer_dir).encode_batch(captions, max_length=12)
    assert torch.equal(batches[-1]["input_ids"], want["input_ids"])
    assert torch.equal(batches[-1]["attention_mask"], want["attention_mask"])


@pytest.mark.parametrize("transform", ["eval", "train"])
def test_batches_equal_the_cpp_pipeline_byte_for_byte(data_dir, tmp_path, transform):
    rows = read_rows(data_dir)
    loader = bridgetune.DataLoader(data_dir, batch_size=8, num_workers=2, image_size=96, seed=3,
                                   transform=transform)
    loader.set_epoch(2)
    batch = next(iter(loader))
    info = loader.last_batch_info
    assert info["epoch"] == 2 and info["size"] == 8
    assert batch["captions"] == [rows[r]["caption"] for r in info["rows"]]
    for j, row in enumerate(info["rows"][:3]):
        seed = bridgetune.sample_seed(3, 2, row) if transform == "train" else 0
        want = cpp_preprocess(tmp_path, os.path.join(data_dir, rows[row]["image"]), 96, transform, seed)
        got = batch["pixel_values"][j].numpy()
        assert got.tobytes() == want.tobytes(), f"row {row} differs from bridgetune preprocess"


def test_worker_count_does_not_change_batches(data_dir):
    def epoch(workers):
        loader = bridgetune.DataLoader(data_dir, batch_size=16, num_workers=workers, image_size=48, seed=1,
                                       transform="train")
        return [b["pixel_values"].clone() for b in loader]
    a, b = epoch(0), epoch(3)
    assert len(a) == len(b) == 4 and all(torch.equal(x, y) for x, y in zip(a, b))


def test_epochs_reshuffle_and_set_epoch_repeats(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=32)
    orders = []
    for _ in range(2):
        for _ in loader:
            orders.append(list(loader.last_batch_info["rows"]))
    assert loader.epoch == 2
    loader.set_epoch(1)
    again = [list(loader.last_batch_info["rows"]) for _ in loader]
    assert again == orders[4:] and orders[:4] != orders[4:]
    flat = sorted(r for o in orders[:4] for r in o)
    assert flat == list(range(64))


def test_drop_last_and_sharding(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=10, image_size=32, shuffle=False, drop_last=True)
    assert len(loader) == 6 and len(list(loader)) == 6
    keep = bridgetune.DataLoader(data_dir, batch_size=10, image_size=32, shuffle=False)  # torch's default
    sizes = [b["pixel_values"].shape[0] for b in keep]
    assert len(keep) == 7 and sizes[-1] == 4
    ranks = [bridgetune.DataLoader(data_dir, batch_size=8, image_size=32, rank=r, world_size=2) for r in (0, 1)]
    seen = [sorted(r for _ in ld for r in ld.last_batch_info["rows"]) for ld in ranks]
    assert len(ranks[0]) == 4 and not set(seen[0]) & set(seen[1]) and len(seen[0] + seen[1]) == 64


@pytest.mark.parametrize("transform", ["eval", "train"])
def test_resume_yields_exactly_the_remaining_batches(data_dir, transform):
    def make():
        return bridgetune.DataLoader(data_dir, batch_size=8, image_size=40, seed=5, transform=transform,
                                     tokenizer=None)
    full = make()
    full.set_epoch(1)
    want = [b["pixel_values"].clone() for b in full]
    interrupted = make()
    interrupted.set_epoch(1)
    it = iter(interrupted)
    for _ in range(3):
        next(it)
    state = interrupted.state_dict()
    assert state["epoch"] == 1 and state["position"] == 24
    resumed = make()
    resumed.load_state_dict(state)
    got = [b["pixel_values"].clone() for b in resumed]
    assert len(got) == len(want) - 3
    assert all(torch.equal(x, y) for x, y in zip(got, want[3:]))
    assert resumed.state_dict()["epoch"] == 2 and resumed.state_dict()["position"] == 0
    other = bridgetune.DataLoader(data_dir, batch_size=16, image_size=40)
    with pytest.raises(ValueError, match="batch_size"):
        other.load_state_dict(state)


def test_tensors_outlive_the_loader(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=32, shuffle=False)
    kept = list(loader)
    copies = [b["pixel_values"].clone() for b in kept]
    del loader
    import gc
    gc.collect()
    assert all(torch.equal(b["pixel_values"], c) for b, c in zip(kept, copies))


def test_tensors_are_the_batch_buffers_without_a_copy(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=32)
    loader._core.start(0, 0)
    batch, _ = loader._core.next()
    capsule = batch["pixel_values"]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    data = ctypes.c_void_p.from_address(get(capsule, b"dltensor")).value  # DLTensor.data, the C++ buffer
    tensor = torch.utils.dlpack.from_dlpack(capsule)
    assert tensor.data_ptr() == data and data % 64 == 0 and tuple(tensor.shape) == (16, 3, 32, 32)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_rss_does_not_grow_over_20_epochs(data_dir, tokenizer_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=16, image_size=64, tokenizer=tokenizer_dir,
                                   transform="train")
    total = 0
    for epoch in range(20):
        for batch in loader:
            total += float(batch["pixel_values"][0, 0, 0, 0])  # touch the tensor like a training step
        if epoch == 2:
            base = rss_bytes()
    grown = rss_bytes() - base
    assert loader.epoch == 20
    assert grown < 4 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB between epochs 3 and 20"


def test_ctrl_c_stops_cleanly(data_dir):
    # The child restores Python's SIGINT handler itself: a suite started with SIGINT ignored (a background job,
    # `trap '' INT`, no terminal) passes SIG_IGN down, and Python then installs no KeyboardInterrupt handler.
    script = f"""
import signal, sys, bridgetune
signal.signal(signal.SIGINT, signal.default_int_handler)
loader = bridgetune.DataLoader({data_dir!r}, batch_size=8, image_size=256, num_workers=2)
try:
    for epoch in range(10**6):
        for batch in loader:
            print("batch", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(0)
"""
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                         env={**os.environ})
    assert p.stdout.readline().strip() == "batch"
    p.send_signal(2)
    out, _ = p.communicate(timeout=20)
    assert p.returncode == 0 and out.strip().endswith("interrupted")


def test_the_cli_binary_exists():
    assert os.access(BRIDGETUNE, os.X_OK), f"{BRIDGETUNE}: build bridgetune first (make build)"


def test_gil_is_released_while_cpp_works(data_dir):
    """With num_workers=0 every image is decoded inside next(): another Python thread must keep running meanwhile
    (holding the GIL there would let it tick about once per batch). Batches of 16 images take ~10+ ms each, so a
    released GIL gives the 1-ms ticker many ticks per batch whatever the machine's speed."""
    import threading
    import time
    loader = bridgetune.DataLoader(data_dir, batch_size=16, num_workers=0, image_size=288, shuffle=False,
                                   decoded_cache_mb=0)
    ticks, done = [0], threading.Event()

    def tick():
        while not done.is_set():
            time.sleep(0.001)
            ticks[0] += 1
    t = threading.Thread(target=tick)
    t.start()
    try:
        batches = sum(1 for _ in loader)
    finally:
        done.set()
        t.join()
    assert batches == 4 and ticks[0] >= 4 * batches, f"{ticks[0]} ticks over {batches} batches"


def test_tar_shards_give_the_same_samples_as_the_folder(tmp_path):
    from conftest import synth
    folder = synth(tmp_path / "folder", 32, 16)
    shards = synth(tmp_path / "shards", 32, 16, tar=True)
    def samples(data):
        loader = bridgetune.DataLoader(data, batch_size=8, image_size=48, shuffle=False)
        out = {}
        for b in loader:
            for caption, pixels in zip(b["captions"], b["pixel_values"]):
                out.setdefault(caption, []).append(pixels.clone())
        return out
    a, b = samples(folder), samples(shards)
    assert sorted(a) == sorted(b) and len(a) > 1
    assert all(torch.equal(a[k][0], b[k][0]) for k in a)


def test_parquet_as_the_cli_reads_it():
    from conftest import REPO
    path = os.path.join(REPO, "tests", "parquet", "fixtures", "images_snappy_dict_v1.parquet")
    loader = bridgetune.DataLoader(path, batch_size=4, image_size=32, caption_column="image_description",
                                   drop_last=False, shuffle=False)
    batches = list(loader)
    assert len(loader) == len(batches) == 3 and sum(len(b["captions"]) for b in batches) == 11
    assert all(isinstance(c, str) for b in batches for c in b["captions"])
    # Without caption_column, parquet is read with the CLI's default column (source/source.h decides it for both).
    default = list(bridgetune.DataLoader(path, batch_size=4, image_size=32, drop_last=False, shuffle=False))
    assert [b["captions"] for b in default] == [b["captions"] for b in batches]
    with pytest.raises(bridgetune.Error, match=r"images_snappy_dict_v1\.parquet: column 'caption' not found"):
        bridgetune.DataLoader(path, batch_size=4, caption_column="caption")
