"""Image<->text retrieval and the contest's matching task scored from embeddings, as `bridgetune evaluate` does.

    from bridgetune import metrics
    metrics.retrieval_metrics(image_embeds, text_embeds, text_to_image)  # {"i2t_r1": ..., "t2i_r10": ..., ...}
    metrics.matching_metrics(image_embeds, choice_embeds, labels)        # {"matching_accuracy": ..., ...}

Embeddings are numpy arrays or torch tensors (any float dtype, any device). The definitions are the C++ ones
(src/eval/retrieval.h, src/eval/matching.h), and so are the metric names (src/eval/metrics.h; prefix="eval"
gives eval_results.json's keys):
- Similarities are cosines: each embedding is L2-normalised first (normalize=False scores raw dot products; the
  model's contrastive embeddings are normalised already), then text @ image.T in float32.
- The gallery is the distinct images. Text t belongs to image text_to_image[t] (default: text i to image i).
  text->image: a text's rank is the number of other images scoring >= its own image; R@K is the fraction of texts
  with rank < K. image->text: over the images that have a text, an image's best-scoring text decides, and its
  rank is the number of other images' texts scoring >= it. Ties count against the query, so constant scores
  never look good.
- Median ranks are 1-based (1: the right item came first; an even count takes the mean of the two middle ones).
  Mean ranks (1-based) are this module's addition; the C++ reports medians only.
- Matching: a question's prediction is its label only when the label's choice beats every other choice
  strictly; otherwise the first best other choice. Accuracy is right / questions, chance the mean of
  1 / choices.
Non-finite embeddings or scores raise ValueError, as the C++ refuses them: a diverged model's NaNs would
otherwise score like a result.
"""
import numpy as np

RECALL_KS = (1, 5, 10)


def _matrix(x, name):
    """x as a float32 2-D numpy array (torch tensors are detached and copied to the CPU)."""
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    try:
        a = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a numeric [N, D] array or tensor, got {type(x).__name__}") from None
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D [N, D] array, got shape {list(a.shape)}")
    _require_finite(a, name)
    return a


def _require_finite(a, name):
    bad = ~np.isfinite(a)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f"{name} has non-finite values (NaN or inf), first in row {row}: the model's weights are "
                         "damaged or its training diverged; no score is computed from them")


def _normalized(a):
    """Rows scaled to unit L2 norm (a zero row stays zero, as torch.nn.functional.normalize leaves it)."""
    norm = np.sqrt(np.einsum("ij,ij->i", a, a, dtype=np.float64)).astype(np.float32)
    return a / np.maximum(norm, np.float32(1e-12))[:, None]


def _prefixed(scores, prefix):
    return {(f"{prefix}_{k}" if prefix else k): v for k, v in scores.items()}


def _median_rank(ranks):
    """1-based median of 0-based ranks (0 without ranks, as the C++)."""
    return float(np.median(ranks)) + 1.0 if len(ranks) else 0.0


def _mean_rank(ranks):
    return float(np.mean(ranks)) + 1.0 if len(ranks) else 0.0


def _text_to_image(text_to_image, n_text, n_image):
    if text_to_image is None:
        if n_text != n_image:
            raise ValueError(f"text_to_image is needed: {n_text} texts and {n_image} images do not pair one to one")
        return np.arange(n_text)
    if hasattr(text_to_image, "detach"):
        text_to_image = text_to_image.detach().cpu().numpy()
    m = np.asarray(text_to_image)
    if m.ndim != 1 or len(m) != n_text or (len(m) and m.dtype.kind not in "iu"):
        raise ValueError(f"text_to_image: expected {n_text} integer image indices (one per text), got "
                         f"{m.dtype} {list(m.shape)}")
    out = np.flatnonzero((m < 0) | (m >= n_image))
    if len(out):
        raise ValueError(f"text_to_image: text {int(out[0])} names image {int(m[out[0]])}, outside the "
                         f"{n_image} images")
    return m.astype(np.int64)


def similarity(image_embeds, text_embeds, normalize=True):
    """[texts, images] float32 similarities (cosines with normalize=True), as the C++ scores them."""
    img, txt = _matrix(image_embeds, "image_embeds"), _matrix(text_embeds, "text_embeds")
    if img.shape[1] != txt.shape[1]:
        raise ValueError(f"image_embeds and text_embeds differ in width: {img.shape[1]} vs {txt.shape[1]}")
    if normalize:
        img, txt = _normalized(img), _normalized(txt)
    return txt @ img.T


def retrieval_ranks(sim, text_to_image=None, block=1 << 22):
    """0-based ranks from a [texts, images] similarity matrix: (t2i per text, i2t per image that has a text).

    block bounds the temporary memory (elements compared at once)."""
    sim = np.asarray(sim, dtype=np.float32)
    if sim.ndim != 2:
        raise ValueError(f"sim: expected a [texts, images] matrix, got shape {list(sim.shape)}")
    _require_finite(sim, "sim")
    n_text, n_image = sim.shape
    owner = _text_to_image(text_to_image, n_text, n_image)
    if n_text == 0 or n_image == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # text -> image: the own image compares >= itself, hence the - 1
    own = sim[np.arange(n_text), owner]
    t2i = np.empty(n_text, np.int64)
    step = max(1, block // n_image)
    for s in range(0, n_text, step):
        t2i[s:s + step] = (sim[s:s + step] >= own[s:s + step, None]).sum(1) - 1
    # image -> text: each image's best own text against the other images' texts
    has_text = np.zeros(n_image, bool)
    has_text[owner] = True
    best = np.full(n_image, -np.inf, np.float32)
    np.maximum.at(best, owner, own)
    images = np.flatnonzero(has_text)
    i2t = np.empty(len(images), np.int64)
    step = max(1, block // n_text)
    for s in range(0, len(images), step):
        chunk = images[s:s + step]
        cols = sim[:, chunk].T  # [chunk, texts]
        beats = (cols >= best[chunk, None]) & (owner[None, :] != chunk[:, None])
        i2t[s:s + step] = beats.sum(1)
    return t2i, i2t


def retrieval_from_similarity(sim, text_to_image=None, prefix=None):
    """The retrieval metrics of a [texts, images] similarity matrix (see retrieval_metrics)."""
    t2i, i2t = retrieval_ranks(sim, text_to_image)
    scores = {}
    for name, ranks in (("i2t", i2t), ("t2i", t2i)):
        for k in RECALL_KS:
            scores[f"{name}_r{k}"] = float((ranks < k).mean()) if len(ranks) else 0.0
    for name, ranks in (("i2t", i2t), ("t2i", t2i)):
        scores[f"{name}_median_rank"] = _median_rank(ranks)
        scores[f"{name}_mean_rank"] = _mean_rank(ranks)
    return _prefixed(scores, prefix)


def retrieval_metrics(image_embeds, text_embeds, text_to_image=None, normalize=True, prefix=None):
    """Recall@1/5/10 both ways, median and mean ranks: {"i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", ...,
    "i2t_median_rank", "i2t_mean_rank", "t2i_median_rank", "t2i_mean_rank"} (with prefix: "eval_i2t_r1", ...).

    image_embeds [I, D]: each distinct image once. text_embeds [T, D]. text_to_image: T image indices (several
    captions may name one image; an image without a caption stays in the gallery); None pairs text i with image
    i."""
    return retrieval_from_similarity(similarity(image_embeds, text_embeds, normalize), text_to_image, prefix)


def label_index(label, n_choices):
    """A label as a 0-based choice index: an int, a letter A-Z (A = the first choice) or a digit string, as
    matching JSONL files have them; ValueError when it names no choice."""
    if isinstance(label, str) and len(label) == 1 and "A" <= label.upper() <= "Z":
        index = ord(label.upper()) - ord("A")
    elif isinstance(label, str) and label.isdigit() and len(label) <= 3:  # "0".."999", as the C++ reads it
        index = int(label)
    elif isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        index = int(label)
    else:
        raise ValueError(f"label {label!r}: expected an int, a digit string or a letter A-Z")
    if not 0 <= index < n_choices:
        raise ValueError(f"label {label!r} is outside its {n_choices} choices")
    return index


def _labels(labels, n_choices):
    if hasattr(labels, "detach"):
        labels = labels.detach().cpu().numpy()
    labels = list(labels)
    if len(labels) != len(n_choices):
        raise ValueError(f"labels: {len(labels)} labels for {len(n_choices)} questions")
    out = []
    for q, (label, n) in enumerate(zip(labels, n_choices)):
        try:
            out.append(label_index(label, n))
        except ValueError as e:
            raise ValueError(f"labels: question {q}: {e}") from None
    return out


def _score_rows(scores):
    """Per-question 1-D float arrays from a [Q, C] array or a list of per-question sequences."""
    if hasattr(scores, "detach"):
        scores = scores.detach().float().cpu().numpy()
    rows = [np.asarray(s.detach().float().cpu().numpy() if hasattr(s, "detach") else s, dtype=np.float64)
            for s in scores]
    for q, r in enumerate(rows):
        if r.ndim != 1 or len(r) == 0:
            raise ValueError(f"scores: question {q} needs a non-empty 1-D row of choice scores, got shape "
                             f"{list(r.shape)}")
        _require_finite(r[None, :], f"scores of question {q}")
    return rows


def matching_predictions(scores, labels):
    """The predicted choice of each question (ties against the label: see the module's docstring)."""
    rows = _score_rows(scores)
    truth = _labels(labels, [len(r) for r in rows])
    predicted = []
    for r, label in zip(rows, truth):
        others = np.delete(r, label)
        if len(others) and others.max() >= r[label]:
            best = int(np.argmax(others))  # the first maximal other choice
            predicted.append(best + (best >= label))
        else:
            predicted.append(label)
    return np.asarray(predicted, dtype=np.int64)


def matching_from_scores(scores, labels, prefix=None):
    """{"matching_accuracy", "matching_chance", "matching_count"} from per-question choice scores ([Q, C], or a
    list of rows when questions have different numbers of choices) and labels (ints or letters)."""
    rows = _score_rows(scores)
    truth = np.asarray(_labels(labels, [len(r) for r in rows]), dtype=np.int64)
    count = len(rows)
    right = int((matching_predictions(rows, truth) == truth).sum()) if count else 0
    return _prefixed({"matching_accuracy": right / count if count else 0.0,
                      "matching_chance": float(np.mean([1.0 / len(r) for r in rows])) if count else 0.0,
                      "matching_count": count}, prefix)


def matching_metrics(image_embeds, choice_embeds, labels, normalize=True, prefix=None):
    """The matching task from embeddings: image_embeds [Q, D] (question q's image), choice_embeds [Q, C, D] or a
    list of Q [C_q, D] arrays (its caption choices), labels (Q ints or letters). Each choice scores its cosine
    with the question's image (normalize=False: the dot product)."""
    img = _matrix(image_embeds, "image_embeds")
    if hasattr(choice_embeds, "detach") or isinstance(choice_embeds, np.ndarray):
        if len(choice_embeds.shape) != 3:
            raise ValueError(f"choice_embeds: expected [Q, C, D] or a list of [C, D] arrays, got shape "
                             f"{list(choice_embeds.shape)}")
    if len(choice_embeds) != len(img):
        raise ValueError(f"choice_embeds: {len(choice_embeds)} questions, image_embeds has {len(img)}")
    if normalize:
        img = _normalized(img)
    scores = []
    for q, choices in enumerate(choice_embeds):
        c = _matrix(choices, f"choice_embeds[{q}]")
        if c.shape[1] != img.shape[1]:
            raise ValueError(f"choice_embeds[{q}] is {c.shape[1]} wide, image_embeds {img.shape[1]}")
        scores.append((_normalized(c) if normalize else c) @ img[q])
    return matching_from_scores(scores, labels, prefix)
