"""bridgetune.DataLoader keeps torch's DataLoader conventions where drop-in code relies on them: every row by default
(drop_last=False) with len() to match, a .dataset with len(), pickling (spawn), a refused torch wrapper, the
pin_memory note, and state_dict as the mid-epoch resume hook in place of skip_first_batches. Small images: fast."""
import copy
import multiprocessing
import pickle
import warnings

import pytest
import torch
import torch.utils.data

import bridgetune

SIZE = 16  # pixels: the decode dominates anyway, keep the transform trivial


def rows_of(loader):
    """The dataset rows of one epoch, batch by batch."""
    return [list(loader.last_batch_info["rows"]) for _ in loader]


@pytest.mark.parametrize("batch_size,sizes", [(24, [24, 24, 16]), (100, [64])])
def test_default_iteration_sees_every_row_and_len_agrees(data_dir, batch_size, sizes):
    # 64 rows: a batch of 24 used to see 48 rows, a batch of 100 none at all
    loader = bridgetune.DataLoader(data_dir, batch_size=batch_size, image_size=SIZE)
    assert loader.drop_last is False and len(loader) == len(sizes)
    batches = rows_of(loader)
    assert [len(b) for b in batches] == sizes
    assert sorted(r for b in batches for r in b) == list(range(64))
    short = loader.last_batch_info
    assert short["size"] == sizes[-1] and short["first_sample"] + short["size"] == 64


def test_dataset_has_len_and_no_per_sample_access(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=8, image_size=SIZE, rank=1, world_size=2)
    assert len(loader.dataset) == 64 and len(loader) == 4  # the dataset's rows, this rank's batches
    assert loader.dataset.data == data_dir
    with pytest.raises(TypeError, match="iterate the DataLoader itself"):
        loader.dataset[0]


def test_state_dict_is_the_skip_first_batches_route(data_dir):
    def make():
        return bridgetune.DataLoader(data_dir, batch_size=24, image_size=SIZE, seed=3)
    full = make()
    full.set_epoch(1)
    want = rows_of(full)
    run = make()
    run.set_epoch(1)
    it = iter(run)
    next(it)
    state = run.state_dict()
    # accelerate's skip_first_batches looks for a sampler to rebuild a torch DataLoader with: the error says
    # what to do instead
    with pytest.raises(AttributeError, match=r"load_state_dict.*ignore_data_skip=True"):
        run.batch_sampler
    assert not hasattr(run, "sampler")
    resumed = make()
    resumed.load_state_dict(state)
    resumed.set_epoch(1)  # the resumed loop (and HF Trainer) sets the epoch first: the position must survive it
    assert rows_of(resumed) == want[1:]
    # Saved right after the short last batch: the epoch has nothing left, the next one starts afresh.
    for _ in it:
        pass
    end = make()
    end.load_state_dict({**state, "position": 64})
    assert rows_of(end) == [] and end.epoch == 2


def test_the_loader_pickles_and_the_copy_goes_on_where_it_stood(data_dir, tokenizer_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=24, image_size=SIZE, seed=5, tokenizer=tokenizer_dir,
                                   max_seq_length=8, transform="train")
    it = iter(loader)
    first = next(it)
    copied = pickle.loads(pickle.dumps(loader))
    assert copied.state_dict() == loader.state_dict() and copied.batch_size == 24 and len(copied) == 3
    rest = [b["pixel_values"].clone() for b in it]
    got = list(copied)
    assert len(got) == 2 and sorted(got[0]) == sorted(first) == ["attention_mask", "input_ids", "pixel_values"]
    assert all(torch.equal(g["pixel_values"], w) for g, w in zip(got, rest))
    fresh = copy.deepcopy(loader)  # the original finished its epoch: the copy starts epoch 1
    assert fresh.state_dict() == loader.state_dict() and fresh.epoch == 1 and fresh.state_dict()["position"] == 0


def _epoch_rows_in_child(loader, queue):
    queue.put(rows_of(loader))


def test_a_spawned_process_iterates_the_loader(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=24, image_size=SIZE, seed=9, num_workers=1)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=_epoch_rows_in_child, args=(loader, queue))
    p.start()
    got = queue.get(timeout=60)
    p.join(timeout=30)
    assert p.exitcode == 0 and got == rows_of(loader)


class _Wrapper(torch.utils.data.IterableDataset):
    """How a user would hand the loader to torch's DataLoader as a stream."""

    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        return iter(self.loader)


def refusal(torch_loader):
    """(type, message) of the error iterating `torch_loader` raises. The traceback is dropped here so that the
    iterator dies now, by reference count: torch 1.13 shutting down workers from a garbage collection cycle waits
    5 s for each (its queues may be closed first)."""
    it = iter(torch_loader)
    try:
        next(it)
    except Exception as e:
        e.__traceback__ = None
        return type(e), str(e)
    return None, "no error"


def test_wrapping_in_a_torch_dataloader_is_refused(data_dir):
    loader = bridgetune.DataLoader(data_dir, batch_size=24, image_size=SIZE)
    fix = "Iterate it directly (`for batch in loader`) and set its num_workers"
    # As a map-style dataset (torch indexes it per sample), with workers or without.
    for workers in (0, 2):
        kind, message = refusal(torch.utils.data.DataLoader(loader, batch_size=None, num_workers=workers))
        assert kind is TypeError and fix in message
    # As a stream: each worker process would replay the whole epoch; iteration inside a worker refuses.
    kind, message = refusal(torch.utils.data.DataLoader(_Wrapper(loader), batch_size=None, num_workers=2))
    assert kind is RuntimeError and fix in message
    # Streamed in this process (no torch workers) nothing is duplicated: that stays allowed.
    assert len(list(torch.utils.data.DataLoader(_Wrapper(loader), batch_size=None))) == 3


@pytest.mark.skipif(torch.cuda.is_available(), reason="the note is for machines without CUDA")
def test_pin_memory_without_cuda_says_so_once(data_dir):
    with pytest.warns(UserWarning, match="pin_memory=True but CUDA is not available"):
        loader = bridgetune.DataLoader(data_dir, batch_size=100, image_size=SIZE, pin_memory=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # iterating, every epoch, stays quiet
        for _ in range(2):
            assert [b["pixel_values"].shape[0] for b in loader] == [64]
