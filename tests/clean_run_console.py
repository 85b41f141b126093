#!/usr/bin/env python3
"""A clean `etwh run` of the shipped scenarios, as README's main command prints it on a
100-column terminal: no line wider than 100 characters and no warning (the shipped example
providers are clean, or say which lint findings they mean); `-v` still shows those findings.

    clean_run_console.py ETWH
"""
import os
import subprocess
import sys


def run(etwh, *args):
    env = dict(os.environ, COLUMNS="100")
    env.pop("NO_COLOR", None)
    p = subprocess.run([etwh, "run", *args], env=env, capture_output=True, text=True,
                       encoding="utf-8", timeout=600)
    return p.returncode, p.stdout + p.stderr


def main():
    etwh = sys.argv[1]
    problems = []
    rc, text = run(etwh)
    if rc != 0:
        problems.append(f"etwh run exited {rc}")
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if len(line) > 100:
            problems.append(f"line {n} has {len(line)} characters: {line}")
        if "warning" in line.lower():
            problems.append(f"line {n} is a warning: {line}")
    if not any("cases, 0 not as expected" in line for line in lines):
        problems.append("no summary line 'N cases, 0 not as expected'")
    # Verbose shows everything, whole: the lint findings the example means are there as notes.
    rc, verbose = run(etwh, "-v", "--filter", "^prov-capture-state$")
    intended = [line for line in verbose.splitlines() if ", intended: " in line]
    if rc != 0 or not intended or not all(": note: " in line or line.startswith("note: ")
                                          for line in intended):
        problems.append(f"-v does not show the intended lint findings as notes (exit {rc}):\n"
                        + verbose)
    if problems:
        print(text)
        print("\n".join(problems))
        return 1
    print(f"{len(lines)} lines, none over 100 characters, no warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
