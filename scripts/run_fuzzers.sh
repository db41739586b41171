#!/usr/bin/env bash
# run_fuzzers.sh BUILD_DIR SECONDS: runs every fuzz_* binary in BUILD_DIR/fuzz for SECONDS from its seed corpus
# (fuzz/corpus/<name>/, copied to a scratch dir so the committed corpus is never modified).
set -euo pipefail
build=$1
secs=${2:-15}
shopt -s nullglob
status=0
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/"
  echo "== $name (${secs}s)"
  if ! "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 "$work" >"$work.log" 2>&1; then
    tail -40 "$work.log"
    echo "FAILED: $name"
    status=1
  else
    grep -E "^(#[0-9]+ +DONE|Done)" "$work.log" | tail -1 || true
  fi
  rm -rf "$work" "$work.log"
done
exit $status
