#!/usr/bin/env python3
"""Shows that check_trace.py can fail: each real trace file given must pass it, and every
corruption below (one broken rule of the format each) applied to it must fail it with the
problem named. Exit 0 when so, 1 otherwise (the cases that went wrong on stderr)."""
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402


def first(events, pred):
    for i, e in enumerate(events):
        if pred(e):
            return i
    raise LookupError("the trace has no event for this corruption")


def set_field(pred, key, value):
    def corrupt(ev):
        ev[first(ev, pred)][key] = value
    return corrupt


def drop_field(pred, key):
    def corrupt(ev):
        del ev[first(ev, pred)][key]
    return corrupt


def is_x(e):
    return e.get("ph") == "X"


def is_c(e):
    return e.get("ph") == "C"


def unmatched_begin(ev):
    e = ev[first(ev, is_x)]
    ev.append({"ph": "B", "name": "never ended", "pid": e["pid"], "tid": e["tid"], "ts": e["ts"]})


def end_without_begin(ev):
    e = ev[first(ev, is_x)]
    ev.append({"ph": "E", "pid": e["pid"], "tid": e["tid"], "ts": e["ts"]})


def begin_end_going_back(ev):
    e = ev[first(ev, is_x)]
    ev.append({"ph": "B", "name": "b", "pid": e["pid"], "tid": e["tid"], "ts": e["ts"] + 10})
    ev.append({"ph": "E", "name": "b", "pid": e["pid"], "tid": e["tid"], "ts": e["ts"] + 5})


def overlapping_slices(ev):
    e = ev[first(ev, lambda x: is_x(x) and x["dur"] > 0)]
    ev.append({"ph": "X", "name": "overlap", "cat": "c", "pid": e["pid"], "tid": e["tid"],
               "ts": e["ts"] + e["dur"] / 2, "dur": e["dur"] * 10 + 1000})


CORRUPTIONS = {
    "negative dur": set_field(is_x, "dur", -1),
    "dur missing": drop_field(is_x, "dur"),
    "pid a string": set_field(is_x, "pid", "1"),
    "tid missing": drop_field(is_x, "tid"),
    "ts not a number": set_field(is_x, "ts", "0"),
    "unknown phase": set_field(is_x, "ph", "Z"),
    "name missing": drop_field(is_x, "name"),
    "counter not numeric": set_field(is_c, "args", {"events": "12"}),
    "process_name without a name": set_field(lambda e: e.get("name") == "process_name", "args", {}),
    "B never ended": unmatched_begin,
    "E without B": end_without_begin,
    "B/E going back in time": begin_end_going_back,
    "slices overlapping": overlapping_slices,
}


def main():
    wrong = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        problems = check_trace.check_document(doc, [], [])
        if problems:
            wrong.append(f"{path}: the real file fails: {problems[:3]}")
            continue
        for name, corrupt in CORRUPTIONS.items():
            if name == "counter not numeric" and not any(is_c(e) for e in doc["traceEvents"]):
                continue
            bad = copy.deepcopy(doc)
            corrupt(bad["traceEvents"])
            if not check_trace.check_document(bad, [], []):
                wrong.append(f"{path}: corruption '{name}' passed the check")
        if check_trace.check_document({"events": []}, [], []) == []:
            wrong.append("a document without traceEvents passed the check")
        print(f"{path}: valid; {len(CORRUPTIONS)} corruptions of it checked")
    for w in wrong:
        print(w, file=sys.stderr)
    return 1 if wrong or len(sys.argv) < 2 else 0


if __name__ == "__main__":
    sys.exit(main())
