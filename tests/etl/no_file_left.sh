#!/usr/bin/env bash
# `etwh run` leaves no log file behind: at the end of every case, whatever its outcome, the
# driver removes every file the case's sessions were given (a NEWFILE session's numbered files,
# an APPEND session's case file), read or not. Run in a temporary folder of its own (TMPDIR),
# the cases of SCENARIO (file sessions never read; one case failing midway, its sessions still
# running) must leave no .etl file there, and remove no other file (two decoys: a file of the
# same name as a session's, without the run's prefix, and another's numbered file).
#
#   no_file_left.sh ETWH SCENARIO
set -u
etwh=$1 scenario=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/etwh-no-file-left-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

decoys=("$tmp/left-sequential.etl" "$tmp/someone-left-newfile1.etl")
touch "${decoys[@]}"
out=$("$etwh" run "$scenario" 2>&1)
status=$?
echo "$out"
# The first case passes; the second fails at its deliberately wrong expectation (exit 1).
if [[ $status -ne 1 ]] || ! grep -q 'PASS  unread-file-sessions' <<<"$out" ||
   ! grep -q 'FAIL  failing-midway' <<<"$out"; then
  echo "no_file_left.sh: expected unread-file-sessions PASS and failing-midway FAIL (exit 1), got exit $status" >&2
  exit 1
fi
for d in "${decoys[@]}"; do
  if [[ ! -f $d ]]; then
    echo "no_file_left.sh: $d, not a file of the run, was removed" >&2
    exit 1
  fi
  rm -f "$d"
done
left=$(find "$tmp" -name '*.etl*')
if [[ -n $left ]]; then
  echo "no_file_left.sh: log files left behind:" >&2
  echo "$left" >&2
  exit 1
fi
echo "no_file_left.sh: no log file left in $tmp"
