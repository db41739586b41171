"""bridgetune.metrics: recall@K, ranks and matching accuracy from embeddings, with the C++ evaluator's definitions
(ties count against the query, 1-based median ranks, images without a caption out of image->text) checked by
hand on small matrices, and against `bridgetune evaluate` on the same data."""
import concurrent.futures
import json
import os
import shutil

import numpy as np
import pytest
import torch

import bridgetune
from bridgetune import metrics
from conftest import FIXTURE, read_rows, run_cli, synth
from rank_bounds import assert_within, matching_bounds, retrieval_bounds

TOL = 1e-5  # how far a cosine may move between two computations of one model (other batches, other kernels)


def raw(sim):
    """(image_embeds, text_embeds) whose raw dot products (normalize=False) are `sim` [texts, images]."""
    sim = np.asarray(sim, dtype=np.float32)
    return np.eye(sim.shape[1], dtype=np.float32), sim


def test_recall_and_ranks_one_caption_per_image():
    image, text = raw([[0.9, 0.1, 0.0],    # text 0: its image first              -> rank 0
                       [0.5, 0.4, 0.6],    # text 1: two images above it          -> rank 2
                       [0.2, 0.7, 0.7]])   # text 2: a tie with image 1 counts against it -> rank 1
    got = metrics.retrieval_metrics(image, text, normalize=False)
    # image 0: its text 0.9 beats 0.5, 0.2; image 1: 0.4 loses to text 2's 0.7; image 2: 0.7 beats 0.0, 0.6
    assert got == pytest.approx({"i2t_r1": 2 / 3, "i2t_r5": 1.0, "i2t_r10": 1.0, "t2i_r1": 1 / 3, "t2i_r5": 1.0,
                                 "t2i_r10": 1.0, "i2t_median_rank": 1.0, "i2t_mean_rank": 4 / 3,
                                 "t2i_median_rank": 2.0, "t2i_mean_rank": 2.0})
    assert list(metrics.retrieval_metrics(image, text, prefix="eval")) == ["eval_" + k for k in got]


def test_several_captions_per_image_and_an_image_without_one():
    image, text = raw([[0.2, 0.5, 0.1],    # image 0's: image 1 above        -> rank 1
                       [0.9, 0.3, 0.8],    # image 0's: first                -> rank 0
                       [0.1, 0.6, 0.9],    # image 1's: image 2 above        -> rank 1
                       [0.0, 0.7, 0.3]])   # image 1's: first                -> rank 0
    got = metrics.retrieval_metrics(image, text, text_to_image=[0, 0, 1, 1], normalize=False)
    # image->text: image 0's best own text (0.9) beats the others' 0.1, 0.0; image 1's (0.7) beats 0.5, 0.3;
    # image 2 has no caption: a distractor for text->image, no query of its own
    assert got["i2t_r1"] == 1.0 and got["i2t_median_rank"] == 1.0
    assert got["t2i_r1"] == 0.5 and got["t2i_mean_rank"] == 1.5
    assert got["t2i_median_rank"] == 1.5  # ranks 0, 0, 1, 1: the mean of the middle two, 1-based


def test_recall_at_5_and_10_are_strict():
    sim = np.zeros((2, 12), np.float32)
    sim[0, 0], sim[0, 1:6] = 0.5, 0.6   # five images above: rank 5, outside the top 5
    sim[1, 1], sim[1, 2:12] = 0.1, 0.2  # ten above: rank 10
    got = metrics.retrieval_metrics(*raw(sim), text_to_image=[0, 1], normalize=False)
    assert (got["t2i_r1"], got["t2i_r5"], got["t2i_r10"]) == (0.0, 0.0, 0.5)
    assert got["t2i_median_rank"] == 8.5  # ranks 5 and 10, 1-based


def test_constant_scores_never_look_good():
    got = metrics.retrieval_metrics(np.ones((4, 3)), np.ones((4, 3)))
    assert got["i2t_r1"] == got["t2i_r1"] == 0.0 and got["t2i_median_rank"] == 4.0


def test_normalisation_makes_scores_cosines():
    image = np.array([[1.0, 0.0], [0.0, 10.0]])
    text = np.array([[1.0, 0.2], [0.0, 1.0]])  # text 0: cosine prefers image 0, the raw dot product image 1
    assert metrics.retrieval_metrics(image, text)["t2i_r1"] == 1.0
    assert metrics.retrieval_metrics(image, text, normalize=False)["t2i_r1"] == 0.5
    t = metrics.retrieval_metrics(torch.tensor(image), torch.tensor(text, dtype=torch.float64))
    assert t == metrics.retrieval_metrics(image, text)


@pytest.mark.parametrize("call,match", [
    (lambda: metrics.retrieval_metrics([[0.0, np.nan]], [[1.0, 0.0]]), r"image_embeds has non-finite .* row 0"),
    (lambda: metrics.retrieval_metrics(np.eye(2), [[1, 0], [np.inf, 0]]), r"text_embeds has non-finite .* row 1"),
    (lambda: metrics.retrieval_metrics(np.eye(2), np.ones((3, 2))), r"text_to_image is needed: 3 texts and 2 images"),
    (lambda: metrics.retrieval_metrics(np.eye(2), np.eye(2)[:, :1]), r"differ in width: 2 vs 1"),
    (lambda: metrics.retrieval_metrics(np.eye(2), np.eye(2), [0, 2]), r"text 1 names image 2"),
    (lambda: metrics.retrieval_metrics(np.eye(2), np.eye(2), [0]), r"expected 2 integer image indices"),
    (lambda: metrics.matching_from_scores([[0.1, np.nan]], [0]), r"scores of question 0 has non-finite"),
    (lambda: metrics.matching_from_scores([[0.1, 0.2]], ["C"]), r"question 0: label 'C' is outside its 2 choices"),
])
def test_bad_input_raises_one_line(call, match):
    with pytest.raises(ValueError, match=match) as e:
        call()
    assert "\n" not in str(e.value)


def test_matching_accuracy_ties_count_against_the_label():
    scores = [[0.1, 0.9, 0.3],       # label 1 wins
              [0.5, 0.5, 0.2],       # label 0 ties choice 1: wrong, choice 1 predicted
              [0.7, 0.2, 0.7, 0.1],  # label "C" ties choice 0: wrong, the first best other (0) predicted
              [0.9, 0.3]]            # label "A" wins
    labels = [1, 0, "C", "A"]
    assert metrics.matching_predictions(scores, labels).tolist() == [1, 1, 0, 0]
    assert metrics.matching_from_scores(scores, labels) == pytest.approx(
        {"matching_accuracy": 0.5, "matching_chance": (1 / 3 + 1 / 3 + 1 / 4 + 1 / 2) / 4, "matching_count": 4})
    assert metrics.matching_predictions([[0.9, 0.1, 0.9]], [1]).tolist() == [0]
    assert metrics.matching_from_scores(np.full((3, 5), 0.3), [0, 1, 2])["matching_accuracy"] == 0.0


def test_matching_from_embeddings():
    image = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    choices = [torch.tensor([[1.0, 0.0], [0.0, 1.0]]),        # question 0: the label's choice is the image itself
               torch.tensor([[0.0, 0.5], [1.0, 1.0]])]        # question 1: cosines 1 vs 0.71, dot products 0.5 vs 1
    assert metrics.matching_metrics(image, choices, [0, 0])["matching_accuracy"] == 1.0
    assert metrics.matching_metrics(image, choices, [0, 0], normalize=False)["matching_accuracy"] == 0.5
    assert metrics.matching_metrics(image.numpy(), np.stack([c.numpy() for c in choices]), ["A", "A"],
                                    prefix="eval")["eval_matching_accuracy"] == 1.0


def test_the_same_scores_as_bridgetune_evaluate(tmp_path, tokenizer_dir):
    data = synth(tmp_path / "data", 24, 8, min_width=64, max_width=96)
    model = tmp_path / "model"  # the tiny HF fixture (random weights) with a tokenizer
    model.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(FIXTURE, f), model)
    for f in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(tokenizer_dir, f), model)
    common = ["--model_name_or_path", model, "--dataloader_num_workers", 0]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:  # three processes at once: their startup dominates
        list(pool.map(lambda args: run_cli(args[0], *common, *args[1:]), [
            ["evaluate", "--validation_file", data, "--task", "retrieval", "--output_dir", tmp_path / "r"],
            ["evaluate", "--validation_file", os.path.join(data, "matching.jsonl"), "--task", "matching",
             "--output_dir", tmp_path / "m"],
            ["encode", "--data", data, "--output_dir", tmp_path / "idx"]]))
    idx = bridgetune.load_index(str(tmp_path / "idx"))

    def image_of(path):
        return next(i for i, key in enumerate(idx.images) if key.endswith(path))

    rows = read_rows(data)
    texts = idx.text_embeds[[idx.texts.index(r["caption"]) for r in rows]]
    # encode and evaluate embed in other batches: each rank metric as far as float error allows (rank_bounds.py)
    owners = [image_of(r["image"]) for r in rows]
    bounds = retrieval_bounds(idx.image_embeds, texts, owners, TOL, prefix="eval")
    with open(tmp_path / "r" / "eval_results.json") as f:
        want = json.load(f)
    assert_within(want, {k: v for k, v in bounds.items() if "mean_rank" not in k})
    with open(os.path.join(data, "matching.jsonl")) as f:
        questions = [json.loads(line) for line in f]
    image = idx.image_embeds[[image_of(q["image"]) for q in questions]]
    scores = [idx.text_embeds[[idx.texts.index(c) for c in q["caption_choices"]]] @ image[k]
              for k, q in enumerate(questions)]
    labels = [q["label"] for q in questions]
    with open(tmp_path / "m" / "eval_results.json") as f:
        want = json.load(f)
    assert_within(want, matching_bounds(scores, labels, TOL, prefix="eval"))
    assert want["eval_matching_count"] == len(questions)


def test_rank_bounds_are_exact_where_gaps_are_wide_and_cover_both_sides_of_a_tie():
    # well-separated cosines (gaps >= 0.1): the interval is one value, the metric itself
    image = np.eye(3, dtype=np.float32)
    text = np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.6, 0.0, 0.2]], np.float32)  # text 2 ranks its image 3rd
    exact = metrics.retrieval_metrics(image, text, prefix="eval")
    bounds = retrieval_bounds(image, text, [0, 1, 2], 1e-5, prefix="eval")
    assert all(bounds[k] == (v, v) for k, v in exact.items()), bounds
    assert exact["eval_t2i_r1"] == pytest.approx(2 / 3)
    assert_within(exact, bounds)
    with pytest.raises(AssertionError, match="eval_t2i_r1 = 1.0"):
        assert_within({**exact, "eval_t2i_r1": 1.0}, bounds)
    # an exact tie (text 0 scores images 0 and 1 alike): ties count against the query, a 1-ulp change the other way
    # wins; the interval holds both
    tie = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    low, high = retrieval_bounds(image, tie, [0, 1, 2], 1e-5)["t2i_r1"]
    assert (low, high) == (pytest.approx(2 / 3), 1.0)
    m = matching_bounds([[0.5, 0.5 + 1e-7], [0.9, 0.1]], [0, 0], 1e-5)
    assert m["matching_accuracy"] == (0.5, 1.0) and m["matching_count"] == (2, 2)

