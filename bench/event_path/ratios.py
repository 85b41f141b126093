#!/usr/bin/env python3
"""Ratios between the benchmarks of one etwh_bench_event_path run.

Usage: ./build/bin/etwh_bench_event_path --benchmark_repetitions=5 \
           --benchmark_report_aggregates_only=true --benchmark_out=build/event_path.json
       bench/event_path/ratios.py build/event_path.json

Reads the medians (wall and the benchmark thread's cpu time) and cv of Google Benchmark's JSON output and prints the goals (bench/README.md):
EventWrite with one session against the LTTng-UST tracepoint (<= 0.7; snapshot session and
file session drained by lttng-consumerd) and the raw ring (<= 3; also against the ring with a
timestamp per item), EventWrite with no session against 2 ns and the shared-library call floor,
and the end-to-end rate in events/s (>= 5 M) and as a fraction of the raw ring's rate
(>= 0.3 of the ring with a timestamp per item), and the latency floor of the same run: a
cross-process wake-up through a futex in shared memory, p50 and p99. The write goals:
EventWrite to 4 sessions against 1 session (<= 1.5 by the writing thread's cpu time, <= 2 by
wall time; beside it the wall's floor when the consumers share the writer's CPUs (the process's
cpu time per event over its CPUs), the cache-line round trip between two CPUs measured beside each
(where the host runs the vCPUs, which decides the slow mode), and the same ratios of the floors:
four timestamped rings, one reading per item,
against one, with 32-byte items and with 112-byte ones, EventWrite's records, and one ring of
112-byte items read by four consumers, what buffers shared among the sessions would cost), EventWrite to 1
session <= 2x the timestamped ring with a cv under 5% (beside it the ring of record-sized items,
112 bytes, which moves the bytes EventWrite does; on one CPU, `taskset -c 0`, the wall is the writer's
and its reader's time together, so each side's share is printed apart), and
EventWrite with no session <= 1.2x the shared-library call. EventWrite to a compressed file session
against the LTTng-UST file session, per recorded event (<= 0.5), and the uncompressed file session's
ratio beside it.

Exit status: 0 when every goal this run measured is met, 1 when one is missed (the last line names
each), 2 for bad input. A goal whose benchmarks did not run (e.g. LTTng without root) is reported
as not measured and does not fail the run. So is EventWrite 4/1 when the cache line's round trip
beside the two benchmarks differs more than 3-fold: the host ran the vCPUs differently for each
(bench/reducing_variance.md, "The host's modes"), and a ratio across that is no comparison; the
last line names it, to be run again. EventWrite 1 session / ring is judged in either mode: the
ring's cost does not move with it (bench/reducing_variance.md).
"""
import json
import sys

NAMES = {
    "none": "BM_EventWrite_NoSession",
    "floor": "BM_Baseline_SharedLibraryCall",
    "one": "BM_EventWrite_OneSession_32B",
    "four": "BM_EventWrite_FourSessions_32B",
    "lttng": "LTTngUST_Tracepoint_32B",
    "lttng_file": "LTTngUST_Tracepoint_32B/file_session",
    "file": "BM_EventWrite_FileSession_32B",
    "file_z": "BM_EventWrite_CompressedFileSession_32B",
    "ring": "RawRing_32B/2proc/real_time",
    "ring_ts": "RawRing_32B_timestamped/2proc/real_time",
    "ring112_ts": "RawRing_112B_timestamped/2proc/real_time",
    "ring4_ts": "RawRing_32B_timestamped/4rings_5proc/real_time",
    "ring4_112_ts": "RawRing_112B_timestamped/4rings_5proc/real_time",
    "ring1x4_112_ts": "RawRing_112B_timestamped/1ring_4readers_5proc/real_time",
    "e2e": "EndToEnd_Win32_32B/1provider_1consumer/2proc/real_time",
    "wake": "FutexWake_CrossProcess/iterations:1",
    "wake_same": "FutexWake_SameCpu/iterations:1",
    "wake_other": "FutexWake_OtherCpu/iterations:1",
}
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def main(path):
    try:
        with open(path) as f:
            run = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"ratios.py: {path}: {e}", file=sys.stderr)
        return 2
    if not isinstance(run, dict) or not isinstance(run.get("benchmarks"), list):
        print(f"ratios.py: {path}: /benchmarks: not Google Benchmark JSON output", file=sys.stderr)
        return 2
    missed, not_judged = [], []

    def judge(label, met):
        if not met:
            missed.append(label)
        return "met" if met else "MISSED"

    median, cpu, cv, rate, counters = {}, {}, {}, {}, {}
    for b in run["benchmarks"]:
        name, agg = b.get("run_name", b["name"]), b.get("aggregate_name")
        if b.get("error_occurred"):
            print(f"{name}: skipped: {b.get('error_message')}")
            continue
        if agg == "median":
            median[name] = b["real_time"] * UNIT_NS[b.get("time_unit", "ns")]
            cpu[name] = b["cpu_time"] * UNIT_NS[b.get("time_unit", "ns")]
            if "items_per_second" in b:
                rate[name] = b["items_per_second"]
            counters[name] = b
        elif agg == "cv":
            cv[name] = b["real_time"]
    ctx = run.get("context", {})
    print(f"load average during the run: {ctx.get('load_avg')}")
    for key, name in NAMES.items():
        if name in median:
            extra = f", {rate[name] / 1e6:.2f} M items/s" if name in rate else ""
            print(f"{name}: median {median[name]:.2f} ns (cpu {cpu[name]:.2f} ns), "
                  f"cv {cv.get(name, 0) * 100:.1f}%{extra}")
        else:
            print(f"{name}: no median in this run")

    def round_trips(*keys):
        """The cache line's round trip beside each benchmark (None where not measured)."""
        return [counters.get(NAMES[k], {}).get("cpu_round_trip_ns") for k in keys]

    def modes_apart(a, b):
        """Why benchmarks a and b are no comparison (None when they are): the cache line's round
        trip beside them differs more than 3-fold, so the host ran them in different modes."""
        ta, tb = round_trips(a, b)
        if ta and tb and max(ta, tb) > 3 * min(ta, tb):
            return (f"the host ran the two benchmarks in different modes (a cache line's round "
                    f"trip {ta:.0f} ns beside {NAMES[a]}, {tb:.0f} ns beside {NAMES[b]}): run again")
        return None

    def ratio(a, b, goal, label, cpu_goal=None, apart=None):
        if NAMES[a] in median and NAMES[b] in median and apart:
            not_judged.append(label)
            print(f"{label}: {median[NAMES[a]] / median[NAMES[b]]:.2f}, by the writing thread's "
                  f"cpu time {cpu[NAMES[a]] / cpu[NAMES[b]]:.2f}: not judged, {apart}")
        elif NAMES[a] in median and NAMES[b] in median:
            r = median[NAMES[a]] / median[NAMES[b]]
            c = cpu[NAMES[a]] / cpu[NAMES[b]]
            wall_verdict = judge(label, r <= goal)
            cpu_verdict = ""
            if cpu_goal is not None:
                cpu_verdict = f" (goal <= {cpu_goal}: {judge(label + ' (cpu)', c <= cpu_goal)})"
            print(f"{label}: {r:.2f} (goal <= {goal}: {wall_verdict}); "
                  f"by the writing thread's cpu time {c:.2f}{cpu_verdict}")
        else:
            print(f"{label}: not measured in this run")

    if NAMES["none"] in cpu:
        n = cpu[NAMES["none"]]
        floor = cpu.get(NAMES["floor"])
        extra = f"; a call into a shared library that only returns: {floor:.2f} ns" if floor else ""
        verdict = judge("EventWrite with no session", n <= 2)
        print(f"EventWrite with no session: {n:.2f} ns cpu (goal <= 2: {verdict}){extra}")
    ratio("one", "lttng", 0.7, "EventWrite 1 session / LTTng-UST tracepoint")
    ratio("one", "lttng_file", 0.7, "EventWrite 1 session / LTTng-UST tracepoint, file session")
    # File sessions: per event that reached the file (ns_per_recorded, the medians' counter).
    def per_recorded(key):
        return counters.get(NAMES[key], {}).get("ns_per_recorded")

    lf = per_recorded("lttng_file")
    for key, goal, label in (("file_z", 0.5, "EventWrite compressed file session / LTTng-UST "
                                              "file session, per recorded event"),
                             ("file", None, "EventWrite file session / LTTng-UST file session, "
                                            "per recorded event")):
        f = per_recorded(key)
        apart = modes_apart(key, "lttng_file")
        if f and lf and goal and apart:
            not_judged.append(label)
            print(f"{label}: {f / lf:.2f} ({f:.1f} ns / {lf:.1f} ns): not judged, {apart}")
        elif f and lf:
            verdict = (f"goal <= {goal}: {judge(label, f / lf <= goal)}" if goal else
                       "not judged: all 112 bytes of each event reach the disk, whose rate bounds it")
            print(f"{label}: {f / lf:.2f} ({f:.1f} ns / {lf:.1f} ns; {verdict})")
        else:
            print(f"{label}: not measured in this run")
    file_trips = round_trips("file_z", "lttng_file")
    if all(file_trips):
        # The logger reads each record from the writer's CPU; LTTng's consumer moves pages.
        print(f"  a cache line's round trip between two CPUs beside them: {file_trips[0]:.0f} ns "
              f"and {file_trips[1]:.0f} ns")
    cpu_per_event = [(key, counters.get(NAMES[key], {}).get("broker_cpu_ns_per_recorded"))
                     for key in ("file_z", "file")]
    if all(c is not None for _, c in cpu_per_event):
        # What the logger costs whatever share of a CPU the machine's load left it.
        print(f"  the broker's CPU time per recorded event: compressed "
              f"{cpu_per_event[0][1]:.1f} ns, uncompressed {cpu_per_event[1][1]:.1f} ns")
    ratio("one", "ring", 3, "EventWrite 1 session / raw ring")
    ratio("one", "ring_ts", 3, "EventWrite 1 session / raw ring with a timestamp per item")
    # The write goals: several sessions, and the ring with a timestamp per item.
    trips = round_trips("four", "one")
    ratio("four", "one", 2, "EventWrite 4 sessions / 1 session", cpu_goal=1.5,
          apart=modes_apart("four", "one"))
    def floor(a, b, label):
        """A floor's ratio, wall and the writing thread's cpu time, beside EventWrite 4/1's."""
        if NAMES[a] in median and NAMES[b] in median:
            print(f"  its floor, {label}: {median[NAMES[a]] / median[NAMES[b]]:.2f} (wall), "
                  f"{cpu[NAMES[a]] / cpu[NAMES[b]]:.2f} (cpu)")

    def cpu_floor(key):
        """The wall time's floor when the consumers share the writer's CPUs: the process's CPU
        time per event (writer and consumers) over its CPUs, or the writer's own if larger."""
        c = counters.get(NAMES[key], {})
        if "process_cpu_ns_per_write" in c and c.get("cpus"):
            return max(cpu[NAMES[key]], c["process_cpu_ns_per_write"] / c["cpus"])
        return None

    f4, f1 = cpu_floor("four"), cpu_floor("one")
    if f4 and f1:
        print(f"  its floor, the process's cpu time per event over its CPUs (the consumers run "
              f"beside the writer): 4 sessions {f4:.2f} ns, 1 session {f1:.2f} ns, ratio "
              f"{f4 / f1:.2f}; wall / that floor: {median[NAMES['four']] / f4:.2f} and "
              f"{median[NAMES['one']] / f1:.2f}")
    if all(trips):
        print(f"  a cache line's round trip between two CPUs beside them (bench/reducing_variance.md: it "
              f"decides the slow mode): {trips[0]:.0f} ns and {trips[1]:.0f} ns")
    floor("ring4_ts", "ring_ts", "four timestamped rings of 32-byte items / one")
    floor("ring4_112_ts", "ring112_ts",
          "four timestamped rings of 112-byte items (EventWrite's records) / one")
    floor("ring1x4_112_ts", "ring112_ts",
          "one timestamped ring of 112-byte items read by four consumers (buffers shared "
          "among the sessions) / one read by one")
    ratio("one", "ring_ts", 2, "EventWrite 1 session / raw ring with a timestamp per item")
    ring_trips = round_trips("one", "ring_ts")
    if all(ring_trips):
        # Judged in either mode: the ring's cost does not move with it (bench/reducing_variance.md).
        print(f"  the cache line's round trip beside them: {ring_trips[0]:.0f} ns and "
              f"{ring_trips[1]:.0f} ns")
    one = counters.get(NAMES["one"], {})
    if one.get("cpus") == 1 and "process_cpu_ns_per_write" in one and NAMES["ring_ts"] in median:
        # On one CPU the wall is the writer's time plus its consumer's: each side's share apart.
        w, p = cpu[NAMES["one"]], one["process_cpu_ns_per_write"]
        rw = cpu[NAMES["ring_ts"]]
        rr = median[NAMES["ring_ts"]] - rw
        if rr > 0:
            print(f"  on one CPU the writer and its reader take turns: wall / the process's cpu "
                  f"time per event {median[NAMES['one']] / p:.2f}; EventWrite's writer {w:.2f} ns "
                  f"+ its consumer {p - w:.2f} ns (decode into an EVENT_RECORD, the callback), the "
                  f"ring's writer {rw:.2f} ns + its reader {rr:.2f} ns (the wall less the writer's "
                  f"cpu time): writers {w / rw:.2f}, readers {(p - w) / rr:.2f}")
        else:
            print("  on one CPU: the ring's wall is not above its writer's cpu time, no reader share")
    if all(NAMES[k] in median for k in ("one", "ring112_ts", "ring_ts")):
        print(f"  its floor: the timestamped ring of 112-byte items (EventWrite's record) / of 32-byte: "
              f"{median[NAMES['ring112_ts']] / median[NAMES['ring_ts']]:.2f} (wall); "
              f"EventWrite 1 session / it: {median[NAMES['one']] / median[NAMES['ring112_ts']]:.2f}")
    if NAMES["one"] in cv:
        c = cv[NAMES["one"]] * 100
        print(f"EventWrite 1 session cv: {c:.1f}% (goal < 5: {judge('EventWrite 1 session cv', c < 5)})")
    if NAMES["none"] in cpu and NAMES["floor"] in cpu:
        r = cpu[NAMES["none"]] / cpu[NAMES["floor"]]
        label = "EventWrite with no session / shared-library call"
        print(f"{label}: {r:.2f} (goal <= 1.2: {judge(label, r <= 1.2)})")
    e2e, ring = rate.get(NAMES["e2e"]), rate.get(NAMES["ring"])
    if e2e:
        verdict = judge("end to end rate", e2e >= 5e6)
        print(f"end to end: {e2e / 1e6:.2f} M events/s (goal >= 5: {verdict})")
        if ring:
            print(f"end to end / raw ring rate: {e2e / ring:.3f}")
        ring_ts = rate.get(NAMES["ring_ts"])
        if ring_ts:
            r = e2e / ring_ts
            verdict = judge("end to end / timestamped ring rate", r >= 0.3)
            print(f"end to end / raw ring with a timestamp per item: {r:.3f} (goal >= 0.3: {verdict})")
    floors = [(label, counters.get(NAMES[key])) for label, key in
              (("", "wake"), (", sleeper on the waker's CPU", "wake_same"),
               (", sleeper on another CPU", "wake_other"))]
    floors = [(label, w) for label, w in floors if w and "p50_ns" in w and "p99_ns" in w]
    for label, w in floors:
        print(f"latency floor, cross-process futex wake-up{label}: p50 {w['p50_ns'] / 1e3:.1f} us, "
              f"p99 {w['p99_ns'] / 1e3:.1f} us")
    if not floors:
        print("latency floor: not measured in this run")
    if not_judged:
        print(f"not judged in this run: {'; '.join(not_judged)}")
    if missed:
        print(f"goals missed: {'; '.join(missed)}")
        return 1
    print("every goal measured in this run is met")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
