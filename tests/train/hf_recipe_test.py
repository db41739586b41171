#!/usr/bin/python3
"""The published recipe runs as pasted (issue 15), end to end in seconds.

A fake HF hub cache holds BridgeTower/bridgetower-large-itm-mlm-itc (the tiny pytorch_model.bin checkpoint of
make_torch_checkpoints.py: tokenizer.json + vocab.json, no merges.txt) and jmhessel/newyorker_caption_contest as
the datasets library lays it out (matching/train-0000{0,1}-of-00002.parquet, validation, test), the parquet files
written here with the "matching" config's real column set (image struct {bytes, path}, int32, strings, three
list<string> columns, int64). The example's command then runs with every flag it has, only the sizes swapped for
tiny ones (batch, epochs, logging steps) and --report_to all added; the HF Trainer's files are checked for their
key names and schema, the TensorBoard events through this file's own TFRecord / protobuf reader, and the MLflow run
(--report_to all includes it) as mlflow's FileStore reads its files.

usage: hf_recipe_test.py BRIDGETUNE TORCHBIN_HUB WORK_DIR
"""
import glob, json, os, shutil, struct, subprocess, sys, zlib

BT, SRC_HUB, WORK = sys.argv[1:4]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


# The parquet files: tests/parquet/minimal_writer.py (shared with tests/python).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parquet"))
from minimal_writer import IMAGE, INT32, INT64, LIST, STRING, write_parquet  # noqa: E402


def png(seed, w=40, h=32):
    raw = b"".join(b"\0" + bytes(c for x in range(w) for c in ((x * (5 + seed) + y * 3 + seed * 60) % 256,
                                                              (y * 7 + seed * 90) % 256, ((x ^ y) * 11 + seed * 30) % 256))
                   for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# The "matching" config's columns, in the order of the published parquet files.
NYCC = [("image", IMAGE), ("contest_number", INT32), ("image_location", STRING), ("image_description", STRING),
        ("image_uncanny_description", STRING), ("entities", LIST), ("questions", LIST), ("from_description", STRING),
        ("label", STRING), ("n_tokens_label", INT64), ("instance_id", STRING), ("caption_choices", LIST)]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "brown"]


def nycc_rows(first, n):
    rows = []
    for i in range(first, first + n):
        k = i // 2  # two rows per cartoon, as the contest has several per contest
        rows.append({"image": {"bytes": png(k), "path": f"contest_{500 + k}.png"}, "contest_number": 500 + k,
                     "image_location": "an office", "image_description": f"A {COLOURS[k % 10]} balloon over a desk {k}.",
                     "image_uncanny_description": "The balloon talks.", "entities": [f"https://en.wikipedia.org/wiki/{k}"],
                     "questions": [] if i % 3 == 0 else ["Why?", "Who?"], "from_description": f"scene {k}",
                     "label": "ABCDE"[i % 5], "n_tokens_label": 3 + i, "instance_id": f"{i:032x}",
                     "caption_choices": [f"caption {c} for {i}" for c in "ABCDE"]})
    return rows


def fake_hub(hub):
    shutil.rmtree(hub, ignore_errors=True)
    shutil.copytree(os.path.join(SRC_HUB, "models--bt-test--tiny-bin"),
                    os.path.join(hub, "models--BridgeTower--bridgetower-large-itm-mlm-itc"))
    repo = os.path.join(hub, "datasets--jmhessel--newyorker_caption_contest")
    snap = os.path.join(repo, "snapshots", COMMIT, "matching")
    os.makedirs(snap)
    os.makedirs(os.path.join(repo, "refs"))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(COMMIT)
    with open(os.path.join(snap, "..", "README.md"), "w") as f:  # the card's configs block, as the real one has
        f.write("---\nconfigs:\n- config_name: matching\n  data_files:\n" +
                "".join(f"  - split: {s}\n    path: matching/{s}-*\n" for s in ("train", "validation", "test")) +
                "---\n# newyorker_caption_contest\n")
    write_parquet(os.path.join(snap, "train-00000-of-00002.parquet"), NYCC, nycc_rows(0, 7))
    write_parquet(os.path.join(snap, "train-00001-of-00002.parquet"), NYCC, nycc_rows(7, 5))
    write_parquet(os.path.join(snap, "validation-00000-of-00001.parquet"), NYCC, nycc_rows(20, 4))
    write_parquet(os.path.join(snap, "test-00000-of-00001.parquet"), NYCC, nycc_rows(30, 4))


# ---- an independent TensorBoard reader: TFRecord framing with masked CRC32C, Event / Summary protobufs ---------
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def proto_fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        yield field, v


def varint(b, i):
    v = shift = 0
    while True:
        v |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


def read_scalars(path):
    data, i, out = open(path, "rb").read(), 0, []
    while i < len(data):
        (n,), (ncrc,) = struct.unpack("<Q", data[i:i + 8]), struct.unpack("<I", data[i + 8:i + 12])
        assert ncrc == masked(crc32c(data[i:i + 8])), "length CRC"
        rec = data[i + 12:i + 12 + n]
        assert struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] == masked(crc32c(rec)), "data CRC"
        i += 16 + n
        ev = dict(proto_fields(rec))
        if 5 in ev:
            value = dict(proto_fields(dict(proto_fields(ev[5]))[1]))
            out.append((value[1].decode(), ev.get(2, 0), struct.unpack("<f", value[2])[0]))
        else:
            assert ev[3] == b"brain.Event:2", ev
    return out


# ---- the run ------------------------------------------------------------------------------------------------
def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def run(args, expect_ok=True):
    p = subprocess.run([BT] + args, capture_output=True, text=True, env=ENV)
    check((p.returncode == 0) == expect_ok, f"exit {p.returncode} for {' '.join(args)}\n{p.stdout[-3000:]}\n{p.stderr}")
    return p


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
HUB = os.path.join(WORK, "hub")
fake_hub(HUB)
MLRUNS = os.path.join(WORK, "mlruns")  # --report_to all includes MLflow: its file store goes here, not to ./mlruns
ENV = dict(os.environ, HF_HUB_CACHE=HUB, OPENBLAS_NUM_THREADS="1", MLFLOW_TRACKING_URI="file:" + MLRUNS,
           MLFLOW_EXPERIMENT_NAME="hf-recipe")
for k in ("MLFLOW_RUN_ID", "MLFLOW_TAGS", "MLFLOW_EXPERIMENT_ID"):
    ENV.pop(k, None)
OUT = os.path.join(WORK, "bridgetower-test")
# The published command; sizes swapped: batch 40/16 -> 4, 5 epochs -> 2, logging every 10 steps -> 2.
published = ["train", "--output_dir", OUT,
             "--model_name_or_path", "BridgeTower/bridgetower-large-itm-mlm-itc",
             "--dataset_name", "jmhessel/newyorker_caption_contest", "--dataset_config_name", "matching",
             "--image_column", "image", "--caption_column", "image_description", "--remove_unused_columns=False",
             "--do_train", "--do_eval", "--do_predict", '--per_device_train_batch_size=4',
             '--per_device_eval_batch_size=4', "--num_train_epochs", "2", '--learning_rate=1e-5',
             "--overwrite_output_dir", "--save_strategy", "no",
             "--use_habana", "--use_lazy_mode", "--use_hpu_graphs_for_inference", "--gaudi_config_name", "Habana/clip",
             "--throughput_warmup_steps", "3", "--logging_steps", "2", "--dataloader_num_workers", "1",
             "--mediapipe_dataloader"]
p = run(published + ["--report_to", "all", "--max_seq_length", "32", "--torch_threads", "1"])
notes = [l for l in p.stdout.splitlines() if "do not apply" in l]
check(len(notes) == 1 and "--use_habana" in notes[0] and "--gaudi_config_name" in notes[0], f"one Gaudi line: {notes}")
check("--mediapipe_dataloader: the GPU media pipeline does not run here" in p.stdout, "the media pipeline's line")

load = lambda f: json.load(open(os.path.join(OUT, f)))
train = load("train_results.json")
for k in ["train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss", "epoch", "total_flos",
          "data_wait_percent", "global_step"]:  # HF's names, bridgetune's extras kept
    check(k in train, f"train_results.json has {k}")
# 12 training rows over two files: 3 steps of 4 per epoch (one file alone would give 1).
check(train["global_step"] == 6 and train["train_samples"] == 24 and train["epoch"] == 2.0, f"two files read as one: {train}")
ev, test = load("eval_results.json"), load("test_results.json")
for k in ["eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "epoch"]:
    check(k in ev, f"eval_results.json has {k}")
for k in ["test_loss", "test_runtime", "test_samples_per_second", "test_steps_per_second", "epoch"]:
    check(k in test, f"test_results.json has {k}")
check(ev["eval_samples"] == 4 and test["test_samples"] == 4, "the validation and test splits (4 rows each)")
allr = load("all_results.json")
for k in ["train_runtime", "train_loss", "eval_loss", "eval_runtime", "test_loss", "epoch"]:
    check(k in allr, f"all_results.json has {k}")

state = load("trainer_state.json")
hf_fields = {"best_metric", "best_model_checkpoint", "epoch", "eval_steps", "global_step", "is_hyper_param_search",
             "is_local_process_zero", "is_world_process_zero", "log_history", "logging_steps", "max_steps",
             "num_input_tokens_seen", "num_train_epochs", "save_steps", "stateful_callbacks", "total_flos",
             "train_batch_size", "trial_name", "trial_params"}
check(set(state) == hf_fields, f"trainer_state.json fields: {sorted(set(state) ^ hf_fields)}")
check(state["global_step"] == 6 and state["max_steps"] == 6 and state["epoch"] == 2.0 and
      state["train_batch_size"] == 4 and state["logging_steps"] == 2 and state["num_train_epochs"] == 2, str(state))
logs = state["log_history"]
train_logs = [e for e in logs if "loss" in e]
check(len(train_logs) == 3 and all(set(e) == {"loss", "learning_rate", "grad_norm", "epoch", "step"} for e in train_logs),
      f"training log entries: {train_logs}")
check([e["step"] for e in train_logs] == [2, 4, 6], "logged every 2 steps")
check(any("train_runtime" in e for e in logs) and any("eval_loss" in e for e in logs) and any("test_loss" in e for e in logs),
      "log_history holds the train totals and the final evaluations")
check(not glob.glob(os.path.join(OUT, "checkpoint-*")), "--save_strategy no: no checkpoint")

args = load("training_args.json")
check(args["do_train"] is True and args["remove_unused_columns"] is False and args["learning_rate"] == 1e-5 and
      args["per_device_train_batch_size"] == 4 and args["dataset_name"] == "jmhessel/newyorker_caption_contest",
      f"training_args.json: {args}")
check(args["save_strategy"] == "no" and args["bf16"] is False and args["fp16"] is False and
      isinstance(args["bridgetune_version"], str) and args["bridgetune_demo"] is False, f"training_args.json: {args}")
card = open(os.path.join(OUT, "README.md")).read()
for s in ["base_model: BridgeTower/bridgetower-large-itm-mlm-itc", "- jmhessel/newyorker_caption_contest",
          "- learning_rate: 1e-05", "- train_batch_size: 4", "- Loss: ", "| Training Loss | Epoch | Step |"]:
    check(s in card, f"README.md has {s!r}:\n{card}")

events = glob.glob(os.path.join(OUT, "runs", "*_*", "events.out.tfevents.*"))
check(len(events) == 2, f"two event files (the training run, the final evaluations): {events}")
scalars = [s for e in sorted(events) for s in read_scalars(e)]
tags = {t for t, _, _ in scalars}
for t in ["train/loss", "train/learning_rate", "train/grad_norm", "train/samples_per_second", "train/data_wait_percent",
          "train/epoch", "train/train_runtime", "eval/loss", "eval/runtime", "eval/i2t_r1", "test/loss"]:
    check(t in tags, f"TensorBoard tag {t} (have {sorted(tags)})")
loss = {s: v for t, s, v in scalars if t == "train/loss"}
for e in train_logs:
    check(abs(loss[e["step"]] - e["loss"]) < 1e-4 * max(1, abs(e["loss"])), "TensorBoard loss = log_history loss")



def yaml_file(path):  # mlflow reads meta.yaml with PyYAML; a flat mapping's lines where it is not installed
    try:
        import yaml
        return yaml.safe_load(open(path))
    except ImportError:
        out = {}
        for line in open(path):
            k, v = line.rstrip("\n").split(": ", 1)
            out[k] = v[1:-1].replace("''", "'") if v.startswith("'") else int(v) if v.isdigit() else v
        return out


# The MLflow run of --report_to all, as mlflow's FileStore reads it: experiment 0 "Default" and the named one, one
# FINISHED run named after the output folder, the arguments as parameters, log_history's values as metrics.
exps = {d: yaml_file(os.path.join(MLRUNS, d, "meta.yaml")) for d in os.listdir(MLRUNS) if d != ".trash"}
check(exps.get("0", {}).get("name") == "Default", f"experiment 0 is Default: {exps}")
named = [d for d, m in exps.items() if m["name"] == "hf-recipe" and m["experiment_id"] == d]
check(len(named) == 1 and len(exps) == 2, f"the MLFLOW_EXPERIMENT_NAME experiment: {exps}")
exp_dir = os.path.join(MLRUNS, named[0])
runs = [d for d in os.listdir(exp_dir) if os.path.isdir(os.path.join(exp_dir, d))]
check(len(runs) == 1, f"one run: {runs}")
RUN = os.path.join(exp_dir, runs[0])
rm = yaml_file(os.path.join(RUN, "meta.yaml"))
check(rm["status"] == 3 and rm["run_id"] == runs[0] and rm["run_name"] == "bridgetower-test" and
      rm["experiment_id"] == named[0] and rm["end_time"] >= rm["start_time"], f"run meta.yaml: {rm}")
param = lambda k: open(os.path.join(RUN, "params", k)).read()
check(param("learning_rate") == "1e-05" and param("per_device_train_batch_size") == "4" and param("do_train") == "True",
      "MLflow params as HF logs TrainingArguments")
check(open(os.path.join(RUN, "tags", "mlflow.runName")).read() == "bridgetower-test", "the mlflow.runName tag")


def mlflow_metric(k):  # FileStore._get_metric_from_line: "<timestamp> <value> <step>"
    return [(int(s), float(v)) for t, v, s in (l.split(" ") for l in open(os.path.join(RUN, "metrics", k)))]


ml_loss = dict(mlflow_metric("loss"))
check(sorted(ml_loss) == [2, 4, 6] and all(abs(ml_loss[e["step"]] - e["loss"]) < 1e-9 for e in train_logs),
      f"MLflow loss = log_history loss: {ml_loss}")
for k in ["learning_rate", "grad_norm", "epoch", "train_runtime", "train_loss", "eval_loss", "eval_i2t_r1", "test_loss"]:
    check(mlflow_metric(k) and all(s == 6 for s, _ in mlflow_metric(k)[-1:]), f"MLflow metric {k} at step 6")

# Checkpoints per epoch hold HF's trainer_state.json beside bridgetune's resume state; epoch evaluations are logged.
OUT2 = os.path.join(WORK, "per-epoch")
run(["train", "--output_dir", OUT2, "--model_name_or_path", "BridgeTower/bridgetower-large-itm-mlm-itc",
     "--dataset_name", "jmhessel/newyorker_caption_contest", "--dataset_config_name", "matching", "--do_train",
     "--do_eval", "--per_device_train_batch_size", "4", "--num_train_epochs", "1", "--save_strategy", "epoch",
     "--evaluation_strategy=epoch", "--max_train_samples", "8", "--max_eval_samples", "2", "--logging_steps", "1",
     "--max_seq_length", "32", "--dataloader_num_workers", "0", "--torch_threads", "1"])
ck = os.path.join(OUT2, "checkpoint-2")
check(os.path.exists(os.path.join(ck, "bridgetune_state.json")), "checkpoint-2 (8 rows / 4) has the resume state")
ck_state = json.load(open(os.path.join(ck, "trainer_state.json")))
check(set(ck_state) == hf_fields and ck_state["global_step"] == 2 and ck_state["save_steps"] == 2, str(ck_state))
check(any(e.get("step") == 2 and "eval_loss" in e for e in ck_state["log_history"]), "the epoch's evaluation")
check(json.load(open(os.path.join(OUT2, "eval_results.json")))["eval_samples"] == 2, "--max_eval_samples")

# Model selection on the contest's task (issue 26): the matching config's validation split has caption_choices and
# label, so every evaluation reports eval_matching_accuracy; the best checkpoint is kept and becomes the final model.
# No save flag: --load_best_model_at_end saves at each evaluation (HF would save every 500 steps).
OUT5 = os.path.join(WORK, "best-model")
p = run(["train", "--output_dir", OUT5, "--model_name_or_path", "BridgeTower/bridgetower-large-itm-mlm-itc",
         "--dataset_name", "jmhessel/newyorker_caption_contest", "--dataset_config_name", "matching", "--do_train",
         "--do_eval", "--per_device_train_batch_size", "4", "--per_device_eval_batch_size", "4", "--max_steps", "4",
         "--eval_strategy", "steps", "--eval_steps", "2", "--metric_for_best_model", "eval_matching_accuracy",
         "--load_best_model_at_end", "--save_total_limit", "1", "--max_seq_length", "32",
         "--dataloader_num_workers", "0", "--torch_threads", "1", "--overwrite_output_dir"])
check("a checkpoint at every evaluation" in p.stdout and "| matching accuracy " in p.stdout, p.stdout)
state5 = json.load(open(os.path.join(OUT5, "trainer_state.json")))
evals5 = [e for e in state5["log_history"] if "eval_matching_accuracy" in e and e["step"] in (2, 4)][:2]
check(len(evals5) == 2, f"eval_matching_accuracy at steps 2 and 4: {state5['log_history']}")
best5 = max(evals5, key=lambda e: e["eval_matching_accuracy"])  # the first of equals wins (strictly better only)
check(state5["best_metric"] == best5["eval_matching_accuracy"] and
      state5["best_model_checkpoint"] == os.path.join(OUT5, "checkpoint-%d" % best5["step"]), str(state5))
check(os.path.isdir(state5["best_model_checkpoint"]), "the best checkpoint survives --save_total_limit 1")
check(open(os.path.join(OUT5, "model.safetensors"), "rb").read() ==
      open(os.path.join(state5["best_model_checkpoint"], "model.safetensors"), "rb").read(), "final model = best")
ev5 = json.load(open(os.path.join(OUT5, "eval_results.json")))
check("eval_matching_accuracy" in ev5 and "eval_matching_chance" in ev5, f"eval_results.json: {ev5}")
args5 = json.load(open(os.path.join(OUT5, "training_args.json")))
check(args5["load_best_model_at_end"] is True and args5["metric_for_best_model"] == "eval_matching_accuracy" and
      args5["save_strategy"] == "steps" and args5["save_steps"] == 2, f"training_args.json: {args5}")

# Without --do_train nothing trains: --do_eval alone scores the given model. --fp16 is this build's bf16 autocast;
# --trust_remote_code is accepted (nothing is ever executed).
OUT3 = os.path.join(WORK, "eval-only")
p = run(["train", "--output_dir", OUT3, "--model_name_or_path", OUT, "--dataset_name", "jmhessel/newyorker_caption_contest",
         "--dataset_config_name", "matching", "--do_eval", "--max_seq_length", "32", "--dataloader_num_workers", "0",
         "--fp16", "--trust_remote_code", '--per_device_eval_batch_size="3"'])  # quotes a shell would have taken
check("--fp16: on CPU this build's mixed precision is bf16 autocast" in p.stdout, p.stdout)
ev3 = json.load(open(os.path.join(OUT3, "eval_results.json")))
check("eval_loss" in ev3 and "epoch" not in ev3, f"eval only: {ev3}")
check(not os.path.exists(os.path.join(OUT3, "train_results.json")) and
      not os.path.exists(os.path.join(OUT3, "trainer_state.json")) and
      not os.path.exists(os.path.join(OUT3, "model.safetensors")), "eval only: nothing trained")

# The final evaluation normalises with the model folder's preprocessor_config.json (as training does): the same
# model with another image_mean/image_std scores other pixels, so its eval_loss differs.
MODEL4 = os.path.join(WORK, "other-mean-model")
shutil.rmtree(MODEL4, ignore_errors=True)
shutil.copytree(OUT, MODEL4, ignore=shutil.ignore_patterns("checkpoint-*", "runs"))
pp = json.load(open(os.path.join(MODEL4, "preprocessor_config.json")))
pp["image_mean"], pp["image_std"] = [0.9, 0.1, 0.5], [0.05, 0.5, 0.1]
json.dump(pp, open(os.path.join(MODEL4, "preprocessor_config.json"), "w"))
OUT4 = os.path.join(WORK, "eval-other-mean")
run(["train", "--output_dir", OUT4, "--model_name_or_path", MODEL4, "--dataset_name", "jmhessel/newyorker_caption_contest",
     "--dataset_config_name", "matching", "--do_eval", "--max_seq_length", "32", "--dataloader_num_workers", "0",
     "--fp16", "--per_device_eval_batch_size", "3"])
ev4 = json.load(open(os.path.join(OUT4, "eval_results.json")))
check(abs(ev4["eval_loss"] - ev3["eval_loss"]) > 1e-6, f"the folder's mean/std reach the eval: {ev3} vs {ev4}")

# An unknown config names those that exist, before anything is written.
p = run(published[:7] + ["--dataset_config_name", "ranking"] + published[9:], expect_ok=False)
check("no such config (configs in its README.md: matching)" in p.stderr, p.stderr)
check(os.path.exists(os.path.join(OUT, "train_results.json")), "the failed run left the finished one alone")
print("hf recipe: ok")
