#!/usr/bin/env bash
# bridgetune tokenize end to end: stdin lines -> JSON arrays, flags, and a clear error on bad files.
set -euo pipefail
bin=$1
fx=$2
out=$(printf 'the dog\nab ab ab ab ab\n\nthe <mask>\r\n' | "$bin" tokenize --vocab "$fx/tiny/vocab.json" --merges "$fx/tiny/merges.txt" --max_seq_length 4)
want=$'[0, 18, 16, 2]\n[0, 20, 7, 2]\n[0, 2]\n[0, 18, 21, 2]'
[ "$out" == "$want" ] || { echo "unexpected output:"; echo "$out"; exit 1; }
out=$(printf 'the dog\n' | "$bin" tokenize --tokenizer_dir "$fx/tiny" --no_special_tokens)
[ "$out" == "[18, 16]" ] || { echo "unexpected --no_special_tokens output: $out"; exit 1; }
if err=$(echo x | "$bin" tokenize --vocab "$fx/tiny/merges.txt" --merges "$fx/tiny/merges.txt" 2>&1); then
  echo "expected failure on a bad vocab.json"; exit 1
fi
[[ "$err" == *"merges.txt: not valid JSON"* ]] || { echo "unexpected error: $err"; exit 1; }
# Default max_seq_length is 128 (the reference example's); 0 disables truncation.
long=$(printf 'ab %.0s' $(seq 200))
n=$(echo "$long" | "$bin" tokenize --tokenizer_dir "$fx/tiny" | tr -cd ',' | wc -c)
[ "$n" == 127 ] || { echo "default truncation gave $((n + 1)) ids, want 128"; exit 1; }
n=$(echo "$long" | "$bin" tokenize --tokenizer_dir "$fx/tiny" --max_seq_length 0 | tr -cd ',' | wc -c)
[ "$n" -gt 300 ] || { echo "--max_seq_length 0 truncated to $((n + 1)) ids"; exit 1; }
echo "cli_tokenize: ok"
