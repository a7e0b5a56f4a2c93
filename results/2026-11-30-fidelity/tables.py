#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The tables of BENCHMARKS.md's fidelity section, from the CSV beside this file:
python3 results/2026-11-30-fidelity/tables.py"""
import collections
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEDS = ["eevdf", "sis", "sis:IDLE_KICK", "sis:NO_IDLE_CORE", "sis:NO_SIS_UTIL"]


def load(name):
    d = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(HERE, name))):
        d[(r["metric"], r["sched"], int(r["load"]))].append(float(r["value"]))
    return d


def fmt(v):
    return f"{v:.0f}" if v >= 100 or v == int(v) else f"{v:.1f}"


def table(d, metric, title, scheds=SCHEDS, loads=(2, 4, 8, 16)):
    n = {len(v) for (m, s, l), v in d.items() if m == metric and s in scheds and l in loads}
    print(f"{title}: mean (min-max), n={'/'.join(map(str, sorted(n)))} runs x 3 s per cell")
    print(f"{'workers':<8}" + "".join(f"{s:>20}" for s in scheds))
    for l in loads:
        row = f"{l:<8}"
        for s in scheds:
            v = d.get((metric, s, l), [])
            cell = f"{fmt(sum(v) / len(v))} ({fmt(min(v))}-{fmt(max(v))})" if v else "-"
            row += f"{cell:>20}"
        print(row)
    print()


P, W, A = load("placement.csv"), load("wakeup.csv"), load("wakeup-alone.csv")
table(P, "missed_idle_core_per_1k", "missed an idle core /1000 (tracer)")
table(P, "missed_idle_cpu_per_1k", "missed an idle CPU /1000 (tracer)")
table(P, "stacked_per_1k", "stacked on a busy CPU /1000 (tracer)")
table(W, "lat_p99_us", "wakeup latency p99 us, sched_wakeup -> running (tracer)")
table(W, "probe_p99_us", "wakeup latency p99 us as the workers saw it (from the message write)")
table(W, "bpf_ns_per_wakeup", "ns of scx_sis's BPF programs per select_cpu", SCHEDS[1:])
alone = ["eevdf", "sis", "sis:IDLE_KICK"]
table(A, "lat_p99_us", "alone on the host: wakeup latency p99 us (tracer)", alone, (2, 4, 8))
table(A, "probe_p99_us", "alone on the host: p99 us as the workers saw it", alone, (2, 4, 8))
