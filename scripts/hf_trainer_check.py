"""By-hand check against the real Hugging Face stack (never in CI or the README's commands: transformers is not
installable on Debian 12). Trains BridgeTower with bridgetune.hf.ContrastiveTrainer on bridgetune.DataLoader, with no
overrides, evaluates (eval_loss, retrieval, matching), resumes from a mid-run checkpoint and checks that the resumed
losses equal the uninterrupted run's; then checks that the model folder loads strictly (position_ids included).

Setup (transformers 4.30.2 + huggingface_hub 0.16.4 from ../shared/reference/setup_hf_reference.sh; accelerate 0.20.3
from `fetch github:huggingface/accelerate`, `git archive v0.20.3 src | tar -x -C /tmp/accelerate_src` and a
METADATA file "Name: accelerate / Version: 0.20.3" in /tmp/accelerate_src/src/accelerate-0.20.3.dist-info/):
    bridgetune train --demo --output_dir /tmp/m --max_steps 3   # a model folder (tiny preset, demo data)
    bridgetune synth --out /tmp/d/train --n 200 --seed 1; bridgetune synth --out /tmp/d/validation --n 48 --seed 2
    PYTHONPATH=build/python:/tmp/transformers_src/src:/tmp/hfhub_src/src:/tmp/stubs:/tmp/accelerate_src/src \\
        /usr/bin/python3 scripts/hf_trainer_check.py /tmp/m /tmp/d /tmp/hf_out
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch

# transformers 4.30.2 without the Rust `tokenizers`: data_collator imports BertTokenizerFast, which is then missing.
import transformers.models.bert as _bert  # noqa: E402
_bert.BertTokenizerFast = type("BertTokenizerFast", (), {})

import bridgetune  # noqa: E402
from bridgetune.hf import ContrastiveTrainer  # noqa: E402
from transformers import BridgeTowerConfig, BridgeTowerForContrastiveLearning, TrainingArguments  # noqa: E402


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, base = json.loads(raw[8:8 + n]), 8 + n
    dtypes = {"F32": np.float32, "I64": np.int64}
    return {k: torch.from_numpy(np.frombuffer(raw[base + v["data_offsets"][0]:base + v["data_offsets"][1]],
                                              dtype=dtypes[v["dtype"]]).reshape(v["shape"]).copy())
            for k, v in header.items() if k != "__metadata__"}


def hf_folder(model_dir, work):
    """The model folder with model.safetensors as pytorch_model.bin (the reference tree's safetensors is a stub)."""
    os.makedirs(work, exist_ok=True)
    for f in os.listdir(model_dir):
        if f.endswith((".json", ".txt")):
            shutil.copy(os.path.join(model_dir, f), work)
    torch.save(read_safetensors(os.path.join(model_dir, "model.safetensors")), os.path.join(work, "pytorch_model.bin"))
    return work


def trainer(model_dir, data, out, max_steps):
    torch.manual_seed(0)
    model = BridgeTowerForContrastiveLearning.from_pretrained(model_dir)
    args = TrainingArguments(output_dir=out, max_steps=max_steps, learning_rate=5e-4, save_steps=4, logging_steps=2,
                             evaluation_strategy="steps", eval_steps=4, no_cuda=True, report_to=[], seed=1,
                             per_device_train_batch_size=8)
    train = bridgetune.DataLoader(os.path.join(data, "train"), batch_size=8, tokenizer=model_dir,
                                  preprocessor=model_dir, num_workers=2, transform="train", seed=1)
    val = bridgetune.DataLoader(os.path.join(data, "validation"), batch_size=8, tokenizer=model_dir,
                                preprocessor=model_dir, num_workers=2, shuffle=False)
    return ContrastiveTrainer(model=model, args=args, train_dataset=train, eval_dataset=val)


def main(model_dir, data, out):
    shutil.rmtree(out, ignore_errors=True)
    sd = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    print("strict load:", BridgeTowerForContrastiveLearning(BridgeTowerConfig.from_pretrained(model_dir))
          .load_state_dict(sd, strict=True))
    folder = hf_folder(model_dir, os.path.join(out, "model"))
    t = trainer(folder, data, out, 8)
    t.train()
    print("eval:", json.dumps({k: round(v, 4) for k, v in t.evaluate().items()}))
    full = [(h["step"], h["loss"]) for h in t.state.log_history if "loss" in h]
    t2 = trainer(folder, data, out, 8)
    t2.train(resume_from_checkpoint=os.path.join(out, "checkpoint-4"))
    resumed = [(h["step"], h["loss"]) for h in t2.state.log_history if "loss" in h]
    print("uninterrupted:", full, "\nresumed:      ", resumed)
    same = dict(full)[6] == dict(resumed)[6] and dict(full)[8] == dict(resumed)[8]
    print("resume exact:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
