#!/usr/bin/env bash
# test_phases.sh MAKE PHASE...: `make test`'s phases, each a make target, one after the other. A red phase does
# not stop the later ones (the sanitizer and fuzz runs report even when a unit test fails; a failed install stops
# all); the end prints every phase's status and duration, so a run shows where its time went (issue 52), and the
# exit status is 1 when any phase failed.
set -uo pipefail
make_cmd=$1
shift
names=() secs=() codes=()
failed=0
for phase in "$@"; do
  start=$(date +%s)
  echo "=== make $phase ($(date -u +%H:%M:%S) UTC)"
  $make_cmd --no-print-directory "$phase"
  rc=$?
  names+=("$phase") secs+=($(($(date +%s) - start))) codes+=("$rc")
  if [ "$rc" -ne 0 ]; then
    failed=1
    [ "$phase" = deps ] && break  # nothing builds without the packages
  fi
done
minutes() { awk -v s="$1" 'BEGIN { printf "%.1f", s / 60 }'; }
total=0
echo
echo "=== make test: phases"
for i in "${!names[@]}"; do
  total=$((total + secs[i]))
  printf '  %-12s %5d s  %5s min  %s\n' "${names[i]}" "${secs[i]}" "$(minutes "${secs[i]}")" \
    "$([ "${codes[i]}" -eq 0 ] && echo ok || echo "FAILED (exit ${codes[i]})")"
done
printf '  %-12s %5d s  %5s min\n' total "$total" "$(minutes "$total")"
exit "$failed"
