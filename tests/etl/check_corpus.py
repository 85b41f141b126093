#!/usr/bin/env python3
"""Runs check_layout.py on the files Windows wrote (../shared/etl-corpus), each with the record
count SOURCES.md states, so that the checker is proven on Windows' own bytes; also that within
each buffer (one processor's) the records' timestamps never go back, as etwrt's logger writes
them.

    check_corpus.py CORPUS_DIR
Exit 0 when every file passes, 1 when one fails, 77 (CTest's SKIP) when the folder is absent.
"""
import os
import subprocess
import sys
import tempfile
import zipfile

# File (or zip member) and its records, header event included (SOURCES.md).
FILES = [
    ("AMSITrace.etl", None, 21),
    ("lxcore_kernel.etl", None, 4),
    ("powershell.etl", None, 114),
    ("Process.etl", None, 10344),
    ("KernelNetwork.etl", None, 8924),
    ("primitive-types.etl.zip", ".etl", 7),
    ("gcevents.etl.zip", ".etl", 71),  # a circular file
    ("SelfDescribingSingleEvent.etl", None, 23),  # layout 2.0, compressed
    ("net.4.5.2.x64.etl.zip", ".etl", 179474),  # layout 2.0, compressed, merged
]


def main():
    corpus = sys.argv[1]
    if not os.path.isdir(corpus):
        print(f"SKIPPED: no corpus at {corpus} (Windows-written .etl files are not in the repository)")
        return 77
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layout.py")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, member_suffix, records in FILES:
            path = os.path.join(corpus, name)
            if member_suffix:
                with zipfile.ZipFile(path) as archive:
                    member = next(m for m in archive.namelist() if m.endswith(member_suffix))
                    path = archive.extract(member, tmp)
            result = subprocess.run([sys.executable, checker, path, "--records", str(records),
                                     "--expect", '{"ordered_buffers": true}'],
                                    capture_output=True, text=True)
            print(f"{'ok  ' if result.returncode == 0 else 'FAIL'} {name}: {records} records")
            if result.returncode != 0:
                failed += 1
                print(result.stderr, end="")
    print(f"{len(FILES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
