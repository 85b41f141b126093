#!/usr/bin/env python3
"""Checks one `etwh observe` run of an example program: its exit code, the rule IDs of the
failing findings in its JSON report and the rules it could not judge, as data.

  check_observe.py ETWH PROGRAM EXPECTED_RULE|none [MILLISECONDS] [--not-judged RULE:REASON]...

EXPECTED_RULE: the one rule the program's defect breaks (exit 1, every failing finding blames
it, on the example's provider); none: the correct program (exit 0, no failing finding).
--not-judged RULE:REASON: the provider's rule RULE is a NOT JUDGED case (UNSUPPORTED, as
expected) whose not_judged finding gives REASON (step_not_reached, no_write, ...), and not among
the rules its own case judged. Every session's account must balance: written = delivered +
lost (the `accounting` findings of observe/program)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run_observe(etwh, program, ms):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "observe.json")
        run = subprocess.run([etwh, "observe", "--json", report, "--", program, ms],
                             capture_output=True, text=True, timeout=120)
        print(run.stdout, run.stderr)
        with open(report) as f:
            return run.returncode, json.load(f)


def check_not_judged(doc, providers, wanted):
    errors = []
    unjudged = {r["rules"][0]: r for r in doc["results"]
                if r["id"].count("/") == 2 and r["status"] == "UNSUPPORTED"}
    for item in wanted:
        rule, reason = item.split(":", 1)
        case = unjudged.get(rule)
        why = [f.get("observed") for f in case["findings"]
               if f["check"] == "not_judged"] if case else []
        if case is None or not case["as_expected"]:
            errors.append(f"{rule}: no NOT JUDGED case, got {sorted(unjudged)}")
        elif why != [reason]:
            errors.append(f"{rule}: not judged because {why}, expected {reason}")
        if any(rule in p["rules"] for p in providers):
            errors.append(f"{rule}: also among the rules the provider's case judged")
    return errors


def check_accounts(doc):
    """Every session the observer opened: written (expected) = delivered + lost (observed)."""
    program = [r for r in doc["results"] if r["id"] == "observe/program"]
    accounts = [f for r in program for f in r["findings"] if f["check"] == "accounting"]
    errors = []
    if not accounts:
        errors.append("no session account in observe/program")
    for f in accounts:
        if f["severity"] != "note" or f.get("observed") != f["expected"]:
            errors.append(f"session {f.get('evidence')}: {f['text']}")
    return errors


def check_event_id_filter(doc, judged):
    """The default schedule's event ID filter step: no excluded event reached the session
    (FLT-PER-SESSION as data); judged (PASS) on a run that went through the whole schedule."""
    cases = [r for r in doc["results"] if r["id"] == "observe/event-id-filter"]
    if len(cases) != 1:
        return ["no observe/event-id-filter case"]
    c = cases[0]
    checks = [f for f in c["findings"] if f["check"] == "event_id_filter"]
    if c["status"] == "FAIL" or (judged and (c["status"] != "PASS" or not checks)):
        return [f"observe/event-id-filter: {c['status']}: {c['message']}"]
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("etwh")
    parser.add_argument("program")
    parser.add_argument("expected")
    parser.add_argument("ms", nargs="?", default="2500")
    parser.add_argument("--not-judged", action="append", default=[])
    a = parser.parse_args()
    code, doc = run_observe(a.etwh, a.program, a.ms)
    failing = [(r["id"], f["rule"]) for r in doc["results"] for f in r["findings"]
               if f["severity"] == "failure"]
    # The provider's own case: observe/<GUID> (its NOT JUDGED rules are observe/<GUID>/<RULE>).
    providers = [r for r in doc["results"] if r["id"].count("/") == 1
                 and r["id"] not in ("observe/program", "observe/event-id-filter")]
    errors = []
    if len(providers) != 1:
        errors.append(f"expected one provider judged, got {[r['id'] for r in providers]}")
    kinds = [f for r in providers for f in r["findings"] if f["text"].startswith("event kind seen")]
    if not kinds:
        errors.append("no event kind listed")
    # The examples' TraceLogging event, decoded through its metadata (TDH), by name and fields.
    decoded = [f["event"] for f in kinds if "event" in f]
    if not a.not_judged and not any(
            e["name"] == "Heartbeat" and [x["name"] for x in e["fields"]] == ["Count"]
            and e["fields"][0]["value"].isdigit() for e in decoded):
        errors.append(f"the Heartbeat event is not listed decoded: {decoded}")
    if a.expected == "none":
        if code != 0 or failing:
            errors.append(f"expected a pass (exit 0), got exit {code}, {failing}")
    else:
        rules = {rule for _, rule in failing}
        if code != 1 or rules != {a.expected}:
            errors.append(f"expected exit 1 and only {a.expected}, got exit {code}, "
                          f"{sorted(rules)}")
    errors += check_not_judged(doc, providers, a.not_judged)
    errors += check_accounts(doc)
    errors += check_event_id_filter(doc, judged=not a.not_judged)
    for e in errors:
        print("check_observe:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
