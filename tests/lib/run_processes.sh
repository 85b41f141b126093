# Sourced by tests/outlive/signal_driver.sh and tests/faults/kill_one.sh: a run's processes are
# found by its private home. Each iteration gives etwh a TMPDIR of its own ($work/run-N), where
# it makes its ETWRT_HOME (etwh-home-*; `etwh selftest` makes one per run it starts, in its work
# folder there); the sourcing script sets $work.

# pid and name of every live (non-zombie) process whose environment names a home under $1.
members() {
  local pid state name
  for file in $(grep -lzs "^ETWRT_HOME=$1/" /proc/[0-9]*/environ); do
    pid=${file#/proc/}
    pid=${pid%/environ}
    state=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null)
    [[ -z $state || $state == Z || $state == X ]] && continue
    name=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
    echo "$pid $name"
  done
}

# Kills every process of the run whose home is under $1.
kill_members() {
  members "$1" | while read -r pid _; do kill -KILL "$pid" 2>/dev/null; done
}

# Whatever a run left is killed and $work removed, however the test ends.
cleanup() {
  for tmp in "$work"/run-*; do
    [[ -d $tmp ]] || continue
    kill_members "$tmp"
  done
  rm -rf "$work"
}

# The test's verdict after its runs: failed when none of them hit ($1 is 0; $3 says what never
# happened), else passed when there were no failures ($2).
verdict() {
  if (($1 == 0)); then
    echo "FAIL: $3: the test proved nothing"
    return 1
  fi
  (($2 == 0))
}
