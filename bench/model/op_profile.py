#!/usr/bin/python3
"""Where a training step's time goes: the chrome trace bench_model writes (trace=PATH) as a table of self time per
op (time in the op minus the ops it called), largest first, with its share of the step.

    build/bench/bench_model small 8 1 40 2 0 /tmp/step.json && bench/model/op_profile.py /tmp/step.json [--top 20]
"""
import argparse
import collections
import json


def self_times(events):
    """Self time per op name: per thread, intervals nested by start/end; a child's time is taken off its parent."""
    by_tid = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_tid[e.get("tid")].append((float(e["ts"]), float(e["ts"]) + float(e["dur"]), e["name"]))
    total = collections.Counter()
    calls = collections.Counter()
    for spans in by_tid.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []  # [end, name, self]
        for start, end, name in spans:
            while stack and stack[-1][0] <= start:
                e, n, own = stack.pop()
                total[n] += own
            if stack:
                stack[-1][2] -= end - start
            stack.append([end, name, end - start])
            calls[name] += 1
        for e, n, own in stack:
            total[n] += own
    return total, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    with open(a.trace) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    total, calls = self_times(events)
    whole = sum(total.values())
    print(f"| op | self ms | share | calls |\n|---|---:|---:|---:|")
    for name, us in total.most_common(a.top):
        print(f"| {name} | {us / 1000:.1f} | {100 * us / whole:.1f} % | {calls[name]} |")
    print(f"| (all ops, summed over threads) | {whole / 1000:.1f} | 100 % | {sum(calls.values())} |")


if __name__ == "__main__":
    main()
