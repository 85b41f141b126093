#!/usr/bin/env python3
"""Checks one `etwh observe` run of an example program: its exit code and the rule IDs of the
failing findings in its JSON report, as data.

  check_observe.py ETWH PROGRAM EXPECTED_RULE|none [MILLISECONDS]

EXPECTED_RULE: the one rule the program's defect breaks (exit 1, every failing finding blames
it, on the example's provider); none: the correct program (exit 0, no failing finding)."""
import json
import os
import subprocess
import sys
import tempfile


def main():
    etwh, program, expected = sys.argv[1:4]
    ms = sys.argv[4] if len(sys.argv) > 4 else "2500"
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "observe.json")
        run = subprocess.run([etwh, "observe", "--json", report, "--", program, ms],
                             capture_output=True, text=True, timeout=120)
        print(run.stdout, run.stderr)
        with open(report) as f:
            doc = json.load(f)
    failing = [(r["id"], f["rule"]) for r in doc["results"] for f in r["findings"]
               if f["severity"] == "failure"]
    providers = [r for r in doc["results"] if r["id"] != "observe/program"]
    errors = []
    if len(providers) != 1:
        errors.append(f"expected one provider judged, got {[r['id'] for r in providers]}")
    kinds = [f for r in providers for f in r["findings"] if f["text"].startswith("event kind seen")]
    if not kinds:
        errors.append("no event kind listed")
    if expected == "none":
        if run.returncode != 0 or failing:
            errors.append(f"expected a pass (exit 0), got exit {run.returncode}, {failing}")
    else:
        rules = {rule for _, rule in failing}
        if run.returncode != 1 or rules != {expected}:
            errors.append(f"expected exit 1 and only {expected}, got exit {run.returncode}, "
                          f"{sorted(rules)}")
    for e in errors:
        print("check_observe:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
