#!/usr/bin/env python3
"""`etwh judge` over the corpus of .etl files recorded on real Windows (../shared/etl-corpus).

Usage: judge_corpus.py ETWH CORPUS_DIR

Each file (the .zip ones extracted into a temporary folder) is judged on its own with --json:
etwh exits 0 or 1, never 2 (every file opens and plays through); the trace's own case counts the
records SOURCES.md states for the file and passes CON-HEADER-EVENT, CON-ORDER and CON-CLOCK; a
file whose header says EventsLost > 0 carries an events_lost warning; every case of a provider
names the rules it judged; the rules no trace shows are NOT JUDGED. Prints one line per file
(records, providers, failed rules, warnings). Exit 77 (SKIPPED) without the corpus;
ETWRT_ETL_CORPUS names the corpus folder instead of CORPUS_DIR.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

SKIP = 77


def stated_records(sources):
    """file name -> records, from SOURCES.md's table (a .zip row names its member too)."""
    counts = {}
    for line in sources.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not re.fullmatch(r"\d+", cells[4]):
            continue
        names = re.findall(r"[\w.\-]+\.etl(?:\.zip)?", cells[0])
        if names:
            counts[names[0]] = int(cells[4])
    return counts


def files_of(corpus, tmp, counts):
    """(shown name, path to the .etl, stated records) for each file of the table."""
    for name, records in sorted(counts.items()):
        path = os.path.join(corpus, name)
        if name.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                member = next(m for m in z.namelist() if m.lower().endswith(".etl"))
                z.extract(member, tmp)
                path = os.path.join(tmp, member)
        yield name, path, records


def check_file(etwh, name, path, records, tmp):
    problems = []
    out = os.path.join(tmp, "judge.json")
    if os.path.exists(out):
        os.remove(out)  # the previous file's report must not pass for this one's
    run = subprocess.run([etwh, "judge", path, "--json", out, "-q"], capture_output=True,
                         text=True, timeout=300)
    if run.returncode not in (0, 1):
        return [f"{name}: etwh judge exited {run.returncode}: {run.stderr.strip()}"], ""
    if not os.path.isfile(out):
        return [f"{name}: etwh judge exited {run.returncode} and wrote no report: "
                f"{run.stderr.strip()}"], ""
    with open(out, encoding="utf-8") as f:
        report = json.load(f)
    cases = report["results"] if "results" in report else report["cases"]
    trace = cases[0]
    if trace["status"] != "PASS":
        problems.append(f"{name}: the trace's own case is {trace['status']}: {trace['message']}")
    counted = [f for f in trace["findings"] if f.get("check") == "records"]
    if not counted or counted[0].get("observed") != str(records):
        problems.append(f"{name}: records {counted[0].get('observed') if counted else '?'}, "
                        f"SOURCES.md says {records}")
    lost = [f for f in trace["findings"] if f.get("check") == "events_lost"]
    providers = [c for c in cases if c["id"].startswith(trace["id"] + "/")]
    failed = sorted({f["rule"] for c in providers for f in c["findings"]
                     if f.get("severity") == "failure" and f.get("rule")})
    warned = sorted({f["rule"] for c in providers for f in c["findings"]
                     if f.get("severity") == "warning" and f.get("rule")})
    for c in providers:
        if not c.get("rules"):
            problems.append(f"{name}: {c['id']} names no rule it judged")
    not_judged = [c for c in cases if c["status"] == "UNSUPPORTED"]
    if not any(c["id"] == "judge/HDR-FLAGS" for c in not_judged):
        problems.append(f"{name}: HDR-FLAGS is not NOT JUDGED")
    line = (f"{name}: {records} records, {len(providers)} provider(s), failed {failed or '-'}, "
            f"warnings {warned or '-'}{', ' + lost[0]['text'] if lost else ''}")
    return problems, line


def main():
    etwh, corpus = sys.argv[1], sys.argv[2]
    # As the reader's corpus test: ETWRT_ETL_CORPUS names another place (a worktree whose
    # parent has no shared/).
    corpus = os.environ.get("ETWRT_ETL_CORPUS", corpus)
    sources = os.path.join(corpus, "SOURCES.md")
    if not os.path.isfile(sources):
        print(f"SKIPPED: no corpus at {corpus} (SOURCES.md absent)")
        return SKIP
    with open(sources, encoding="utf-8") as f:
        counts = stated_records(f.read())
    problems = []
    with tempfile.TemporaryDirectory(prefix="etwh-judge-corpus-") as tmp:
        for name, path, records in files_of(corpus, tmp, counts):
            found, line = check_file(etwh, name, path, records, tmp)
            problems += found
            if line:
                print(line)
    if len(counts) < 9:
        problems.append(f"SOURCES.md lists {len(counts)} files, 9 expected")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
