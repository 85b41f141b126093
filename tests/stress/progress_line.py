#!/usr/bin/env python3
"""`etwh stress`'s progress line: drawn on stderr when stderr is a terminal (a pty here), with
what runs and the time left, redrawn in place and erased when each run ends; absent from a
pipe or a log. Two short runs of one profile (a sweep), once each way.

    progress_line.py ETWH PROFILE
"""
import os
import pty
import subprocess
import sys

ARGS = ["--sweep", "duration_ms=600,700"]


def with_terminal_stderr(etwh, profile):
    master, slave = pty.openpty()
    p = subprocess.Popen([etwh, "stress", profile, *ARGS], stdout=subprocess.PIPE,
                         stderr=slave, env=dict(os.environ, COLUMNS="100"))
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read().decode()
    p.wait()
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


def main(etwh, profile):
    problems = []
    rc, out, terminal = with_terminal_stderr(etwh, profile)
    if rc != 0:
        problems.append(f"exit {rc} with a terminal")
    for run in ("[1/2]", "[2/2]"):
        if f"\r\x1b[K{run} " not in terminal:
            problems.append(f"no progress line {run} drawn on the terminal")
    if " s left" not in terminal:
        problems.append("the progress line does not say the time left")
    if not terminal.endswith("\r\x1b[K"):
        problems.append("the progress line is not erased at the end")
    if "\x1b[K" in out:
        problems.append("the progress line went to stdout")
    piped = subprocess.run([etwh, "stress", profile, *ARGS], capture_output=True, text=True)
    if piped.returncode != 0:
        problems.append(f"exit {piped.returncode} piped")
    if "\x1b[K" in piped.stderr + piped.stdout or "[1/2]" in piped.stderr + piped.stdout:
        problems.append("a progress line in a pipe")
    if problems:
        print("terminal:", repr(terminal[-2000:]), "\nstdout:", out, "\npiped:", piped.stdout,
              piped.stderr)
        print("\n".join(problems))
        return 1
    print("progress line drawn on a terminal, erased, absent from pipes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
