#!/usr/bin/env python3
"""Checks a Trace Event Format file (what `etwh run --trace` and `etwh stress --trace` write)
against the format as Perfetto UI and chrome://tracing read it:

- the document: an object with a "traceEvents" array (displayTimeUnit "ms" or "ns" if given);
- every event: "ph" a known phase, "pid" and "tid" integers, "ts" a number (all but metadata),
  "name" a string (all but "E"), "args" an object when present;
- "X": "dur" a number >= 0; the slices of one track nest (a slice that begins inside another
  ends inside it);
- "B"/"E": matched per track (pid, tid), an "E" with a name closes a "B" of that name, and their
  timestamps never go back on the track;
- "C": "args" an object of numbers, at least one;
- "i"/"I": scope "s" one of g, p, t when given;
- "M": process_name / thread_name with a string args.name (or the sort indexes, labels).

--require NAME (repeatable) also asks for an event of that name, or a process or thread of that
name (a prefix with a trailing '*'),
--require-phase PH for at least one event of that phase. Exit 0 when valid, 1 with one line per
problem (FILE: /traceEvents/N: reason), 2 when the file cannot be read as JSON.
"""
import argparse
import json
import sys

PHASES = set("BEXiICMbensftPOND(){}RcGT") | {"p"}  # every phase the format defines
METADATA_NAMES = {"process_name", "thread_name", "process_sort_index", "thread_sort_index",
                  "process_labels"}
EPSILON_US = 0.001  # one ns: timestamps are written with ns resolution


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_event(e, where, problems):
    """Field checks of one event; returns False when it is too broken to follow further."""
    if not isinstance(e, dict):
        problems.append(f"{where}: not an object")
        return False
    ph = e.get("ph")
    if not isinstance(ph, str) or ph not in PHASES:
        problems.append(f"{where}/ph: not a phase of the format: {ph!r}")
        return False
    for key in ("pid", "tid"):
        if not is_int(e.get(key)):
            problems.append(f"{where}/{key}: not an integer: {e.get(key)!r}")
            return False
    if ph != "M" and not is_number(e.get("ts")):
        problems.append(f"{where}/ts: missing or not a number")
        return False
    if ph != "E" and not isinstance(e.get("name"), str):
        problems.append(f"{where}/name: missing or not a string")
    if "args" in e and not isinstance(e["args"], dict):
        problems.append(f"{where}/args: not an object")
        return False
    if ph == "X" and (not is_number(e.get("dur")) or e["dur"] < 0):
        problems.append(f"{where}/dur: missing, not a number or negative: {e.get('dur')!r}")
        return False
    if ph == "C":
        args = e.get("args")
        if not args or not all(is_number(v) for v in args.values()):
            problems.append(f"{where}/args: a counter needs numeric values, got {args!r}")
    if ph in ("i", "I") and "s" in e and e["s"] not in ("g", "p", "t"):
        problems.append(f"{where}/s: instant scope not g, p or t: {e['s']!r}")
    if ph == "M":
        if e.get("name") not in METADATA_NAMES:
            problems.append(f"{where}/name: unknown metadata {e.get('name')!r}")
        elif e["name"].endswith("_name") and not isinstance(e.get("args", {}).get("name"), str):
            problems.append(f"{where}/args/name: missing or not a string")
    return True


def check_tracks(events, problems):
    """B/E matching and order, and X nesting, per (pid, tid)."""
    open_b = {}      # track -> [(name, where)]
    last_be = {}     # track -> ts of the last B/E
    slices = {}      # track -> [(ts, end, where)]
    for where, e in events:
        track = (e["pid"], e["tid"])
        ph = e["ph"]
        if ph in ("B", "E"):
            if track in last_be and e["ts"] < last_be[track]:
                problems.append(f"{where}/ts: {e['ts']} goes back on track pid {track[0]} "
                                f"tid {track[1]} (last B/E at {last_be[track]})")
            last_be[track] = e["ts"]
            stack = open_b.setdefault(track, [])
            if ph == "B":
                stack.append((e["name"], where))
            elif not stack:
                problems.append(f"{where}: E without a B on track pid {track[0]} tid {track[1]}")
            else:
                name, _ = stack.pop()
                if "name" in e and e["name"] != name:
                    problems.append(f"{where}/name: E {e['name']!r} closes B {name!r}")
        elif ph == "X":
            slices.setdefault(track, []).append((e["ts"], e["ts"] + e["dur"], where))
    for track, stack in open_b.items():
        for name, where in stack:
            problems.append(f"{where}: B {name!r} never ended on track pid {track[0]} "
                            f"tid {track[1]}")
    for track, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        enclosing = []  # ends of the slices that contain the current one
        for begin, end, where in spans:
            while enclosing and enclosing[-1] <= begin + EPSILON_US:
                enclosing.pop()
            if enclosing and end > enclosing[-1] + EPSILON_US:
                problems.append(f"{where}: slice [{begin}, {end}] overlaps the end of the slice "
                                f"around it ({enclosing[-1]}) on track pid {track[0]} "
                                f"tid {track[1]}")
            enclosing.append(end)


def check_document(doc, required, required_phases):
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["/traceEvents: missing or not an array"]
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        problems.append(f"/displayTimeUnit: not ms or ns: {doc['displayTimeUnit']!r}")
    good = []
    for i, e in enumerate(doc["traceEvents"]):
        where = f"/traceEvents/{i}"
        if check_event(e, where, problems):
            good.append((where, e))
    check_tracks(good, problems)
    names = [e.get("name", "") for _, e in good]
    names += [e["args"]["name"] for _, e in good
              if e["ph"] == "M" and isinstance(e.get("args", {}).get("name"), str)]
    for want in required:
        hit = (any(n.startswith(want[:-1]) for n in names) if want.endswith("*")
               else want in names)
        if not hit:
            problems.append(f"/traceEvents: no event named {want!r}")
    for ph in required_phases:
        if not any(e["ph"] == ph for _, e in good):
            problems.append(f"/traceEvents: no event of phase {ph!r}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--require", action="append", default=[], metavar="NAME")
    parser.add_argument("--require-phase", action="append", default=[], metavar="PH")
    args = parser.parse_args()
    try:
        with open(args.file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.file}: cannot read as JSON: {e}", file=sys.stderr)
        return 2
    problems = check_document(doc, args.require, args.require_phase)
    for p in problems:
        print(f"{args.file}: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.file}: valid ({len(doc['traceEvents'])} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
