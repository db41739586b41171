"""Rank-derived metrics (recall@K, median/mean rank, matching accuracy) checked only as far as float error allows.

Two computations of the same embeddings (other batch shapes, another GEMM, another thread count) differ in their
last bits, and a rank is not continuous in the scores: two near-tied scores swap. So a metric computed along one
path is compared with the interval the other path's scores allow when every similarity may be off by `tol`: the
favourable end raises each right (text, image) pair by tol and lowers every other pair by tol, the unfavourable end
the reverse. Every metric is monotone in that perturbation, so any scores within tol give a value inside the
interval; outside it, the difference is a real one.
"""
import numpy as np
import pytest

from bridgetune import metrics

RANK_KEYS = ("r1", "r5", "r10", "median_rank", "mean_rank", "matching_accuracy")


def is_rank_metric(key):
    return any(key.endswith(k) for k in RANK_KEYS)


def retrieval_bounds(image_embeds, text_embeds, text_to_image, tol, prefix=None):
    """{metric: (low, high)} of metrics.retrieval_metrics when each cosine may be off by tol."""
    sim = metrics.similarity(image_embeds, text_embeds).astype(np.float64)
    owner = np.asarray(text_to_image)
    right = np.zeros(sim.shape, bool)
    right[np.arange(len(owner)), owner] = True
    best = metrics.retrieval_from_similarity(np.where(right, sim + tol, sim - tol), owner, prefix)
    worst = metrics.retrieval_from_similarity(np.where(right, sim - tol, sim + tol), owner, prefix)
    return {k: (min(best[k], worst[k]), max(best[k], worst[k])) for k in best}


def matching_bounds(scores, labels, tol, prefix=None):
    """{metric: (low, high)} of metrics.matching_from_scores when each choice's score may be off by tol."""
    truth = [metrics.label_index(label, len(s)) for s, label in zip(scores, labels)]
    ends = []
    for sign in (1, -1):
        moved = []
        for s, t in zip(scores, truth):
            s = np.asarray(s.detach().float().cpu().numpy() if hasattr(s, "detach") else s, np.float64)
            is_label = np.arange(len(s)) == t
            moved.append(np.where(is_label, s + sign * tol, s - sign * tol))
        ends.append(metrics.matching_from_scores(moved, truth, prefix))
    return {k: (min(ends[0][k], ends[1][k]), max(ends[0][k], ends[1][k])) for k in ends[0]}


def assert_within(got, bounds, slack=1e-12):
    """Every metric of `bounds` is in `got` and inside its interval."""
    for key, (low, high) in bounds.items():
        assert key in got, f"{key} missing from {sorted(got)}"
        assert low - slack <= got[key] <= high + slack, f"{key} = {got[key]}, float error allows [{low}, {high}]"


def assert_same_metrics(got, want, bounds, rel=1e-5):
    """got == want for the continuous metrics (within rel) and the counts; the rank metrics inside `bounds`."""
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    assert_within(got, bounds)
    for key in want:
        if key not in bounds:
            assert got[key] == pytest.approx(want[key], rel=rel), key
