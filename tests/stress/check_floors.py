#!/usr/bin/env python3
"""`etwh stress`'s latency floors, from a real run: the wake-up floor in each placement and
etwrt's reader nap as slept (harness/stress/README.md). Each window holds the samples it says,
every nap lasted at least what was asked, and each session's latency_vs_floor is its latency
over that floor, percentile by percentile.

Usage: check_floors.py ETWH PROFILE OUT_JSON
"""
import json
import subprocess
import sys


def fail(why):
    print(f"check_floors.py: {why}", file=sys.stderr)
    sys.exit(1)


def main(etwh, profile, out):
    run = subprocess.run([etwh, "stress", profile, "--sweep", "duration_ms=200", "--json", out],
                         capture_output=True, text=True)
    print(run.stdout + run.stderr)
    if run.returncode != 0:
        fail(f"etwh stress exited {run.returncode}")
    if "floor: etwrt reader nap (25 us)" not in run.stdout:
        fail("the console does not report the reader's nap")
    with open(out) as f:
        result = json.load(f)["results"][0]
    nap = result["reader_nap_us"]
    if nap["asked"] != 25:
        fail(f"/results/0/reader_nap_us/asked: {nap['asked']}, etwrt's nap is 25 us")
    slept = nap["slept"]
    if (slept["before"]["samples"], slept["after"]["samples"], slept["samples"]) != (500, 500, 1000):
        fail(f"/results/0/reader_nap_us/slept: samples {slept['before']['samples']} before, "
             f"{slept['after']['samples']} after, {slept['samples']} in all; want 500, 500, 1000")
    # The shortest nap's bucket: the histogram's lowest non-empty one (within 1/64 of its values).
    shortest_ns = slept["histogram"]["buckets"][0][2]
    if shortest_ns < 25000:
        fail(f"a nap of 25 us lasted at most {shortest_ns} ns: the timeout was not what was slept")
    floors = {"reader_nap": slept}
    for placement in ("same_cpu", "other_cpu"):
        f = result["wake_floor_us"][placement]
        if "unavailable" not in f:
            floors[placement] = f
    for i, session in enumerate(result["sessions"]):
        for key, floor in floors.items():
            ratios = session["latency_vs_floor"][key]
            for q in ("p50", "p99", "p999"):
                want = session["latency_us"][q] / floor[q]
                if abs(ratios[q] - want) > 1e-6 * want:
                    fail(f"/results/0/sessions/{i}/latency_vs_floor/{key}/{q}: {ratios[q]}, "
                         f"the latency's {session['latency_us'][q]} us over the floor's "
                         f"{floor[q]} us is {want}")
    print(f"floors checked: {', '.join(floors)}; the nap slept p50 {slept['p50']} us, "
          f"p99 {slept['p99']} us")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
