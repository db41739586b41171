"""bridgetune.DataLoader over a list of datasets: mixed as `train --train_file A --train_file B` (HF's
interleave_datasets semantics, loader/mix_order.h)."""
import math

import pytest

from conftest import read_rows, synth


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("mix")
    return synth(root / "a", 12, 8, 64, 96), synth(root / "b", 8, 6, 64, 96)


def test_round_robin_alternates_and_is_the_same_for_any_worker_count(two_sets):
    import bridgetune

    a, b = two_sets
    caps_a, caps_b = {r["caption"] for r in read_rows(a)}, {r["caption"] for r in read_rows(b)}

    def epoch(workers, stopping):
        dl = bridgetune.DataLoader([a, b], batch_size=4, num_workers=workers, image_size=32, seed=3,
                                   mix_stopping=stopping)
        caps = [c for batch in dl for c in batch["captions"]]
        return len(dl), caps

    n, caps = epoch(0, "first_exhausted")
    assert len(caps) == 16 and n == 4  # 2 x min(12, 8) rows, alternating A B A B ...
    assert all(c in caps_a for c in caps[0::2]) and all(c in caps_b for c in caps[1::2])
    assert epoch(2, "first_exhausted") == (n, caps)
    n, caps = epoch(1, "all_exhausted")
    assert len(caps) == 24 and n == math.ceil(24 / 4)  # 2 x max: B restarts, every row of both read
    assert set(caps) == caps_a | caps_b


def test_weights_need_several_datasets(two_sets):
    import bridgetune

    with pytest.raises(ValueError, match="mix_weights"):
        bridgetune.DataLoader(two_sets[0], batch_size=4, mix_weights=[1.0])
    with pytest.raises(Exception, match="--train_mix_weights: 1 weights for 2 datasets"):
        bridgetune.DataLoader(list(two_sets), batch_size=4, mix_weights=[1.0])
