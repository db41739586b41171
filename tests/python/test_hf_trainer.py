"""bridgetune.hf.ContrastiveTrainer: HF's Trainer (a stub following its call order: fake_transformers.py) trains,
evaluates, checkpoints and resumes on bridgetune.DataLoader with zero overrides."""
import json
import os
import subprocess
import sys

import pytest
import torch

import bridgetune
import fake_transformers as fake
from bridgetune import metrics
from conftest import read_rows, synth
from rank_bounds import assert_same_metrics, matching_bounds, retrieval_bounds

SIZE, SEQ = 16, 16
TOL = 1e-5  # how far a cosine may move between two computations of one model (other batches, other kernels)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """32 rows over 24 small images, with the matching.jsonl synth writes beside captions.jsonl."""
    return synth(tmp_path_factory.mktemp("hf"), 32, 24, min_width=48, max_width=64)


@pytest.fixture
def hf(monkeypatch):
    fake.install(monkeypatch)
    from bridgetune.hf import ContrastiveTrainer
    return ContrastiveTrainer


def loader(data, tokenizer_dir, batch_size=8, **kw):
    return bridgetune.DataLoader(data, batch_size=batch_size, image_size=SIZE, tokenizer=tokenizer_dir,
                                 max_seq_length=SEQ, num_workers=0, **kw)


def run(hf, data, tokenizer_dir, out, crash_at=None, resume=False, **args):
    """A fresh model, loaders and trainer (as a restarted process has), trained 2 epochs of 4 steps."""
    model = fake.FakeBridgeTower(crash_at=crash_at)
    targs = fake.TrainingArguments(output_dir=str(out), per_device_train_batch_size=8, num_train_epochs=2,
                                   save_steps=2, **args)
    trainer = hf(model=model, args=targs, train_dataset=loader(data, tokenizer_dir, transform="train", seed=3),
                 eval_dataset=loader(data, tokenizer_dir, shuffle=False))
    if crash_at is None:
        trainer.train(resume_from_checkpoint=True if resume else None)
    else:
        with pytest.raises(fake.SimulatedCrash):
            trainer.train()
    return trainer, model


@pytest.mark.parametrize("crash_at,checkpoint", [(3, 2), (5, 4)])  # mid-epoch; right after epoch 0's last batch
def test_resume_goes_on_batch_for_batch(hf, data, tokenizer_dir, tmp_path, crash_at, checkpoint):
    _, whole = run(hf, data, tokenizer_dir, tmp_path / "whole")
    assert len(whole.seen) == 8
    _, crashed = run(hf, data, tokenizer_dir, tmp_path / "run", crash_at=crash_at)
    folder = tmp_path / "run" / f"checkpoint-{checkpoint}"
    with open(folder / "bridgetune_loader.json") as f:
        state = json.load(f)
    # a finished epoch is saved as the start of the next one: the Trainer resumes in epoch global_step // 4
    assert (state["epoch"], state["position"]) == divmod(checkpoint * 8, 32)
    _, resumed = run(hf, data, tokenizer_dir, tmp_path / "run", resume=True)
    seen = crashed.seen[:checkpoint] + resumed.seen
    assert len(seen) == 8 and all(torch.equal(a, b) for a, b in zip(seen, whole.seen))
    for a, b in zip(resumed.parameters(), whole.parameters()):
        assert torch.allclose(a, b, atol=1e-6)


def test_ignore_data_skip_given_keeps_its_meaning(hf, data, tokenizer_dir, tmp_path):
    _, whole = run(hf, data, tokenizer_dir, tmp_path / "whole")
    run(hf, data, tokenizer_dir, tmp_path / "run", crash_at=3)
    trainer, resumed = run(hf, data, tokenizer_dir, tmp_path / "run", resume=True, ignore_data_skip=True)
    assert torch.equal(resumed.seen[0], whole.seen[0])  # epoch 0 again from its first batch, as HF does
    plain = fake.TrainingArguments(output_dir=str(tmp_path))
    hf(model=resumed, args=plain, train_dataset=loader(data, tokenizer_dir))
    assert plain.ignore_data_skip is False  # the caller's arguments are left as given


def expected_eval(model, val, data, tokenizer_dir):
    """eval_loss (over the batches of 2 rows or more, weighed by their rows), retrieval and matching computed
    directly from the loader's batches, images told apart by their file; and the interval of each rank metric
    that scores within TOL of these allow (rank_bounds.py: the trainer's embeddings differ in their last bits)."""
    model.eval()
    rows = read_rows(data)
    loss_sum, loss_rows, images, texts, owners, gallery = 0.0, 0, [], [], [], {}
    with torch.no_grad():
        for batch in val:
            out = model(**batch, return_loss=True)
            if len(out.text_embeds) > 1:
                loss_sum += out.loss.item() * len(out.text_embeds)
                loss_rows += len(out.text_embeds)
            for j, row in enumerate(val.last_batch_info["rows"]):
                key = rows[row]["image"]
                if key not in gallery:
                    gallery[key] = len(images)
                    images.append(out.image_embeds[j])
                texts.append(out.text_embeds[j])
                owners.append(gallery[key])
        want = {"eval_loss": loss_sum / loss_rows, "eval_samples": len(texts), "eval_images": len(images)}
        want.update(metrics.retrieval_metrics(torch.stack(images), torch.stack(texts), owners, prefix="eval"))
        bounds = retrieval_bounds(torch.stack(images), torch.stack(texts), owners, TOL, prefix="eval")
        tok = bridgetune.Tokenizer(tokenizer_dir)
        with open(os.path.join(data, "matching.jsonl")) as f:
            questions = [json.loads(line) for line in f]
        scores = []
        for q in questions:
            enc = tok.encode_batch(q["caption_choices"], max_length=SEQ)
            pixels = bridgetune.preprocess(os.path.join(data, q["image"]), SIZE).expand(len(q["caption_choices"]),
                                                                                         -1, -1, -1)
            out = model(pixel_values=pixels, **enc)
            scores.append((out.text_embeds * out.image_embeds).sum(-1))
        labels = [q["label"] for q in questions]
        want.update(metrics.matching_from_scores(scores, labels, prefix="eval"))
        bounds.update(matching_bounds(scores, labels, TOL, prefix="eval"))
    return want, bounds


@pytest.mark.parametrize("batch_size", [10, 31])  # 10, 10, 10, 2 rows: weights; 31, 1: a batch without a loss
def test_evaluate_gives_loss_retrieval_and_matching(hf, data, tokenizer_dir, tmp_path, batch_size):
    trainer, model = run(hf, data, tokenizer_dir, tmp_path)
    got = trainer.evaluate(loader(data, tokenizer_dir, shuffle=False, batch_size=batch_size))
    want, bounds = expected_eval(model, loader(data, tokenizer_dir, shuffle=False, batch_size=batch_size), data,
                                 tokenizer_dir)
    assert_same_metrics(got, want, bounds)
    assert got["eval_samples"] == 32 and got["eval_images"] == 24 and got["eval_matching_count"] == 32
    assert got["eval_matching_chance"] == pytest.approx(0.2)
    # other batches (8 rows): the same recall as far as float error allows
    again = trainer.evaluate(eval_dataset={"val": loader(data, tokenizer_dir, shuffle=False)})
    low, high = bounds["eval_t2i_r1"]
    assert low <= again["eval_val_t2i_r1"] <= high
    augmented = loader(data, tokenizer_dir, shuffle=False, transform="train")
    assert trainer.evaluate(augmented) == trainer.evaluate(augmented)  # epoch 0's crops each time, as the C++
    # the gallery groups rows by image key, as `bridgetune evaluate` does: random crops of one image are one image
    assert trainer.evaluate(augmented)["eval_images"] == 24
    off = hf(model=model, args=fake.TrainingArguments(output_dir=str(tmp_path)),
             eval_dataset=loader(data, tokenizer_dir, shuffle=False), matching_data=None).evaluate()
    assert "eval_matching_accuracy" not in off and off["eval_t2i_r1"] == again["eval_val_t2i_r1"]  # same batches


def test_without_the_drop_in_the_trainer_cannot_use_the_loader(data, tokenizer_dir, tmp_path, monkeypatch):
    fake.install(monkeypatch)
    trainer = fake.Trainer(model=fake.FakeBridgeTower(), args=fake.TrainingArguments(output_dir=str(tmp_path)),
                           train_dataset=loader(data, tokenizer_dir))
    with pytest.raises(TypeError, match="must not be wrapped in torch.utils.data.DataLoader"):
        trainer.train()


def test_errors_name_the_fix(hf, data, tokenizer_dir, tmp_path):
    args = fake.TrainingArguments(output_dir=str(tmp_path))
    with pytest.raises(TypeError, match=r"train_dataset must be a bridgetune.DataLoader \(got list\)"):
        hf(model=fake.FakeBridgeTower(), args=args, train_dataset=[1, 2]).train()
    with pytest.raises(ValueError, match="batch_eval_metrics=True needs your own compute_metrics"):
        hf(model=fake.FakeBridgeTower(), args=fake.TrainingArguments(output_dir=str(tmp_path),
                                                                    batch_eval_metrics=True))
    with pytest.raises(ValueError, match="the loader yields captions, not input_ids: give bridgetune.DataLoader"):
        val = bridgetune.DataLoader(data, batch_size=8, image_size=SIZE, num_workers=0)
        hf(model=fake.FakeBridgeTower(), args=args, eval_dataset=val).evaluate()


def test_import_needs_no_transformers_until_the_trainer_is_asked_for(monkeypatch):
    # a None entry makes any `import transformers` raise ImportError
    code = "import sys; sys.modules['transformers'] = None; import bridgetune, bridgetune.hf, bridgetune.metrics"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import bridgetune.hf
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.setattr(bridgetune.hf, "_TRAINER", None)
    with pytest.raises(ImportError, match="needs transformers .*pip install transformers"):
        bridgetune.hf.ContrastiveTrainer


def test_rows_delivered_twice_count_once():
    from bridgetune.hf import compute_retrieval_metrics
    import numpy as np
    image = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])  # rows 0, 1, then row 0 again (a rank's padding)
    text = np.array([[1.0, 0.1], [0.1, 1.0], [1.0, 0.1]])
    ids = np.array([[7, 0], [8, 1], [7, 0]])             # (pixel fingerprint, dataset row)
    got = compute_retrieval_metrics(fake.EvalPrediction((image, text), ids))
    assert (got["samples"], got["images"], got["t2i_r1"], got["i2t_r1"]) == (2, 2, 1.0, 1.0)
    batches = fake.EvalPrediction([(image[:2], text[:2]), (image[2:], text[2:])], [ids[:2], ids[2:]])
    assert compute_retrieval_metrics(batches) == got  # eval_do_concat_batches=False


def test_matching_data_named_skips_unreadable_images_when_told(hf, data, tokenizer_dir, tmp_path):
    with open(os.path.join(data, "matching.jsonl")) as f:
        lines = f.read().splitlines()[:3]
    bad = json.loads(lines[1])
    bad["image"] = "images/missing.jpg"
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join([lines[0], json.dumps(bad), lines[2]]) + "\n")
    for f in os.listdir(os.path.join(data, "images")):
        (tmp_path / "images").mkdir(exist_ok=True)
        os.symlink(os.path.join(data, "images", f), tmp_path / "images" / f)
    args = fake.TrainingArguments(output_dir=str(tmp_path / "out"))
    skip = hf(model=fake.FakeBridgeTower(), args=args, matching_data=str(questions),
              eval_dataset=loader(data, tokenizer_dir, shuffle=False, on_bad_sample="skip")).evaluate()
    assert skip["eval_matching_count"] == 2
    with pytest.raises(bridgetune.Error, match="missing.jpg"):
        hf(model=fake.FakeBridgeTower(), args=args, matching_data=str(questions),
           eval_dataset=loader(data, tokenizer_dir, shuffle=False)).evaluate()
    questions.write_text(lines[0] + "\n" + json.dumps({**bad, "label": "Z"}) + "\n")
    with pytest.raises(ValueError, match=r"questions.jsonl:2: label 'Z' is outside its 5 choices"):
        hf(model=fake.FakeBridgeTower(), args=args, matching_data=str(questions),
           eval_dataset=loader(data, tokenizer_dir, shuffle=False)).evaluate()
