#!/usr/bin/env python3
"""Checks that a run with one defect turns exactly the rules whose checks saw it red, in every
output: the console's rule table, the JSON report's rules[], JUnit (each testcase's rule verdict
lines), the HTML report's matrix and `etwh compare` of a clean run against it.

  check_blame.py ETWH RED_RULES --defect "ARGS" --clean "ARGS"

RED_RULES: comma-separated, the rules that must be red (FAIL, XPASS, TIMEOUT, ...) and no other.
ARGS: an etwh command line ("observe -- PROGRAM 6000", "run --subject AGENT FILE"); --json and
--junit are added after its first word. The console runs with COLUMNS=100 and must keep every
line within it."""
import argparse
import html.parser
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

FINE = {"PASS", "XFAIL", "UNSUPPORTED", "NOT_REACHED"}
WIDTH = 100


def run(etwh, args, tmp, label):
    words = shlex.split(args)
    report, junit = os.path.join(tmp, label + ".json"), os.path.join(tmp, label + ".xml")
    argv = [etwh, words[0], "--json", report, "--junit", junit] + words[1:]
    env = dict(os.environ, COLUMNS=str(WIDTH))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    print(done.stdout, done.stderr)
    with open(report) as f, open(junit) as x:
        return done.stdout, json.load(f), x.read()


def console_red(text):
    """The red rows of the console's rule table."""
    red, in_table = set(), False
    for line in text.splitlines():
        if line.startswith("RULE "):
            in_table = True
            continue
        m = re.match(r"^([A-Z][A-Z0-9-]+) +([A-Z_]+) +\d+", line)
        if in_table and m:
            if m.group(2) not in FINE:
                red.add(m.group(1))
        elif in_table:
            in_table = False
    return red


def junit_red(xml):
    return {m.group(1) for m in re.finditer(r"^rule ([A-Z0-9-]+): ([A-Z_]+) ", xml, re.M)
            if m.group(2) not in FINE}


class DataScript(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.inside, self.data = False, ""

    def handle_starttag(self, tag, attrs):
        self.inside = tag == "script" and ("id", "etwh-data") in attrs

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.data += data


def html_red(etwh, report, tmp):
    page = os.path.join(tmp, "page.html")
    subprocess.run([etwh, "report", report, "-o", page], check=True, timeout=60)
    parser = DataScript()
    with open(page) as f:
        parser.feed(f.read())
    view = json.loads(parser.data)
    red = set()

    def walk(node):
        if isinstance(node, dict):
            rules = node.get("rules")
            if isinstance(rules, list) and rules and isinstance(rules[0], dict) \
                    and "cells" in rules[0]:
                for r in rules:
                    if any(c and c["status"] not in FINE for c in r["cells"]):
                        red.add(r["id"])
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(view)
    return red


def compare_red(etwh, clean, defect, tmp):
    out = os.path.join(tmp, "compare.json")
    subprocess.run([etwh, "compare", clean, defect, "--json", out], timeout=60)
    with open(out) as f:
        doc = json.load(f)
    return {r["id"] for r in doc["rules"] if r["new"] not in FINE}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("etwh")
    parser.add_argument("red")
    parser.add_argument("--defect", required=True)
    parser.add_argument("--clean", required=True)
    a = parser.parse_args()
    want = set(a.red.split(","))
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        console, doc, xml = run(a.etwh, a.defect, tmp, "defect")
        run(a.etwh, a.clean, tmp, "clean")
        seen = {
            "console": console_red(console),
            "json": {r["id"] for r in doc["rules"] if r["status"] not in FINE},
            "junit": junit_red(xml),
            "html": html_red(a.etwh, os.path.join(tmp, "defect.json"), tmp),
            "compare": compare_red(a.etwh, os.path.join(tmp, "clean.json"),
                                   os.path.join(tmp, "defect.json"), tmp),
        }
        for output, red in seen.items():
            if red != want:
                errors.append(f"{output}: red {sorted(red)}, expected {sorted(want)}")
        long = [line for line in console.splitlines() if len(line) > WIDTH]
        if long:
            errors.append(f"{len(long)} console lines over {WIDTH} characters: {long[0]!r}")
    for e in errors:
        print("check_blame:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
