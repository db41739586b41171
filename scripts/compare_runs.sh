#!/usr/bin/env bash
# Old vs new binary on fixed seeds (a refactor's "behaviour kept" check): runs the same commands with two bridgetune
# binaries and compares everything they write -- weights (sha256), metrics and result JSON (timing keys left out),
# predictions, model cards, indexes, search output -- and prints one line per difference. Exit 0: identical.
#   scripts/compare_runs.sh OLD_BINARY NEW_BINARY [WORK_DIR]
# Takes ~5 min on 2 cores (tiny preset). The data comes from OLD's synth (NEW's synth output is compared too).
set -euo pipefail
old=$1 new=$2 work=${3:-$(mktemp -d)}
mkdir -p "$work"
export OPENBLAS_NUM_THREADS=1

run_all() {  # $1 binary, $2 output folder
  local b=$1 o=$2 d=$work/data
  mkdir -p "$o"
  "$b" synth --out "$o/synth" --n 40 --seed 9 --min_width 200 --max_width 400 >"$o/synth.log"
  "$b" train --model_preset tiny --train_file "$d" --validation_file "$d" --max_steps 30 --dropout 0 \
    --logging_steps 1 --per_device_train_batch_size 8 --gradient_accumulation_steps 2 --seed 5 \
    --learning_rate 1e-3 --eval_steps 15 --save_steps 20 --train_transform train --dataloader_num_workers 2 \
    --output_dir "$o/train" >"$o/train.log" 2>&1
  "$b" train --model_preset tiny --train_file "$d" --max_steps 12 --seed 7 --lora_rank 4 --bf16 \
    --per_device_train_batch_size 8 --dataloader_num_workers 0 --output_dir "$o/lora" >"$o/lora.log" 2>&1
  "$b" evaluate --model_name_or_path "$o/train" --validation_file "$d" --output_dir "$o/eval" >"$o/eval.log" 2>&1
  "$b" encode --model_name_or_path "$o/train" --data "$d" --output_dir "$o/index" >"$o/encode.log" 2>&1
  "$b" search --index "$o/index" --query "a cat on a roof" --json --top_k 5 \
    --contact_sheet "$o/sheet.png" >"$o/search.jsonl" 2>"$o/search.log"
  head -3 "$d/captions.jsonl" | sed 's/.*"caption": *"\([^"]*\)".*/\1/' | "$b" tokenize --tokenizer_name "$o/train" >"$o/tokens.jsonl" 2>&1
}

if [ ! -d "$work/data" ]; then "$old" synth --out "$work/data" --n 240 --seed 3 --min_width 200 --max_width 400 >/dev/null; fi
rm -rf "$work/old" "$work/new"
run_all "$old" "$work/old"
run_all "$new" "$work/new"

python3 - "$work/old" "$work/new" <<'PY'
import hashlib, json, os, re, sys
old, new = sys.argv[1], sys.argv[2]
TIMING = re.compile(r"(runtime|per_second|samples_per_s|time|date|seconds|duration|elapsed|wall|_at$|timestamp|rss|memory_mb|data_wait|mfu|tflops|peak_source|version|load_avg|host)", re.I)
def files(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not TIMING.search(k)}
    if isinstance(v, list):
        return [strip(x) for x in v]
    if isinstance(v, str):
        return v.replace(old, "@").replace(new, "@")
    return v
def jsonish(path):
    text = open(path, encoding="utf-8").read()
    try:
        return [strip(json.loads(text))]
    except ValueError:
        return [strip(json.loads(l)) for l in text.splitlines() if l.strip()]
SKIP = re.compile(r"(\.log$|\.lock$|events\.out\.tfevents|\.svg$|_plot\.png$|/mlruns/)")  # timing inside
def text_lines(path, root):
    lines = open(path, encoding="utf-8", errors="replace").read().replace(root, "@").splitlines()
    return [l for l in lines if not re.search(r"(samples/s|per_second|runtime|seconds|[0-9]+(\.[0-9]+)? ?s\b|date|UTC|it/s)", l)]
a, b = files(old), files(new)
diffs = [f"only in old: {p}" for p in sorted(a - b)] + [f"only in new: {p}" for p in sorted(b - a)]
same = 0
for p in sorted(a & b):
    if SKIP.search(p):
        continue
    po, pn = os.path.join(old, p), os.path.join(new, p)
    if p.endswith((".json", ".jsonl")):
        try:
            eq = jsonish(po) == jsonish(pn)
        except ValueError:
            eq = text_lines(po, old) == text_lines(pn, new)
    elif p.endswith((".md", ".txt", ".csv")):
        eq = text_lines(po, old) == text_lines(pn, new)
    else:
        eq = hashlib.sha256(open(po, "rb").read()).digest() == hashlib.sha256(open(pn, "rb").read()).digest()
    if eq:
        same += 1
    else:
        diffs.append(f"differs: {p}")
for line in diffs:
    print(line)
print(f"{same} files identical, {len(diffs)} differences ({old} vs {new})")
sys.exit(1 if diffs else 0)
PY
