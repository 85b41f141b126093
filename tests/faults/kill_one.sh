#!/usr/bin/env bash
# Fault injection: runs an etwh command ITERATIONS times and SIGKILLs one process of
# the run, TARGET, at a random moment, then checks that the run
#   - ends within BOUND_S seconds (a hang fails the test; the hung run is killed),
#   - leaves nothing running 1 s after it ended (agents, writers, the broker),
#   - exits with one of ALLOWED_EXITS (comma-separated; ignored for TARGET driver, which dies),
#   - wrote a report that holds: for `etwh stress`, written = delivered + reported lost in
#     every session of every result; when the broker was the target, a HARNESS_ERROR names
#     it and (`etwh run`) no case FAILs (a broker that went away is never a rule failing).
# A run that ends before its signal lowers MAX_DELAY_MS to 3/4 of its length for the runs after
# it (a run of 74 cases took 2.3 s here, and delays above that once missed all three runs).
# MAX_DELAY_MS must stay below the run's length for TARGET broker: a broker killed after the
# last case is noticed by no case (and with `etwh run` the broker is killed only while a case's
# agent runs: before the first case, one was once killed at 66 ms and nothing noticed it, rightly).
#
#   kill_one.sh TARGET ITERATIONS MAX_DELAY_MS BOUND_S ALLOWED_EXITS -- ETWH COMMAND ARGS...
#
# TARGET: driver (etwh itself), broker (etwrt-broker), agent (any etwh-agent), consumer (the
# etwh-agent with the most threads: a consumer's ProcessTrace runs on a thread of its own) or
# writer (an etwh-stress-writer). `etwh stress` consumes in threads of the driver, so there
# the driver is its consumer. ETWH_FAULT_ITERATIONS, when set, replaces ITERATIONS (the CTests
# run a few; `ETWH_FAULT_ITERATIONS=20 ctest -R etwh_fault_` runs the full count).
# A run's processes are found by its private home, as in tests/outlive/signal_driver.sh: each
# iteration gives etwh a TMPDIR of its own, where it makes its ETWRT_HOME (etwh-home-*).
set -u

target=$1 iterations=${ETWH_FAULT_ITERATIONS:-$2} max_delay_ms=$3 bound_s=$4 allowed=$5
shift 6
etwh=$1 command=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-faults-XXXXXX")

# members, kill_members and cleanup: the run's processes, found by its home; verdict.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/run_processes.sh"

now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }

threads_of() { sed -n 's/^Threads:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null || echo 0; }

# The pid of the run's TARGET process, or nothing when none is running now.
find_target() {
  local tmp=$1 driver=$2
  case $target in
    driver) echo "$driver" ;;
    broker)
      # `etwh run`: only while a case runs (its agent is up). A broker killed before the first
      # case or between two holds no session: the next case starts another and none notices.
      if [[ $command == run ]] && ! members "$tmp" | awk '$2 == "etwh-agent" {f = 1} END {exit !f}'; then
        return
      fi
      members "$tmp" | awk '$2 == "etwrt-broker" {print $1; exit}' ;;
    writer) members "$tmp" | awk '$2 ~ /^etwh-stress-wri/ {print $1}' | shuf -n 1 ;;
    agent) members "$tmp" | awk '$2 == "etwh-agent" {print $1}' | shuf -n 1 ;;
    consumer)
      members "$tmp" | awk '$2 == "etwh-agent" {print $1}' | while read -r pid; do
        echo "$(threads_of "$pid") $pid"
      done | sort -rn | awk 'NR == 1 && $1 > 1 {print $2}' ;;
    *) echo "unknown TARGET $target" >&2; exit 2 ;;
  esac
}

trap cleanup EXIT

# Checks the report of a run; prints what does not hold.
check_report() {
  python3 - "$1" "$command" "$target" "$killed" <<'PY'
import json, sys
path, command, target, killed = sys.argv[1:5]
# A run the signal missed is judged as an ordinary run: no broker was killed in it.
broker_killed = target == "broker" and killed == "1"
try:
    with open(path) as f:
        report = json.load(f)
except (OSError, ValueError) as e:
    print(f"the report {path} does not parse: {e}")
    sys.exit(1)
bad = 0
for r in report.get("results", []):
    if command == "stress":
        for s in r.get("sessions", []):
            if s["written"] != s["delivered"] + s["reported_lost"]:
                print(f"{r['id']}: session {s['name']}: written {s['written']} != delivered "
                      f"{s['delivered']} + reported lost {s['reported_lost']}")
                bad += 1
    elif broker_killed and r.get("status") == "FAIL":
        print(f"{r['id']}: FAIL after the broker was killed (expected a HARNESS_ERROR): "
              f"{r.get('message', '')[:300]}")
        bad += 1
if broker_killed and not any(
        r.get("status") == "HARNESS_ERROR" and "etwrt broker" in r.get("message", "")
        for r in report.get("results", [])):
    print("no HARNESS_ERROR names the broker that was killed; the results:")
    for r in report.get("results", []):
        print(f"  {r.get('id')}: {r.get('status')}: {r.get('message', '')[:300]}")
    bad += 1
sys.exit(1 if bad else 0)
PY
}

# Exit 0 when every result of the stress report was served by a broker other than pid $2.
served_by_another() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, victim = sys.argv[1], int(sys.argv[2])
try:
    with open(path) as f:
        results = json.load(f).get("results", [])
except (OSError, ValueError):
    sys.exit(1)
served = [(r.get("broker") or {}).get("pid") for r in results]
sys.exit(0 if results and all(p is not None and p != victim for p in served) else 1)
PY
}

failures=0 hits=0 reports=0
for ((i = 1; i <= iterations; i++)); do
  tmp="$work/run-$i"
  mkdir "$tmp"
  report="$tmp/report.json"
  started_ms=$(now_ms)
  env -u ETWRT_HOME TMPDIR="$tmp" "$@" --json "$report" >"$tmp.log" 2>&1 &
  driver=$!
  delay_ms=$((50 + RANDOM % (max_delay_ms - 49)))
  sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
  # The target may not exist yet (a broker starts with the first call), or end before the
  # signal reaches it (an agent lives for one case): look for 2 s more.
  what="no $target to kill after ${delay_ms} ms"
  killed=0
  for ((t = 0; t < 100; t++)); do
    kill -0 "$driver" 2>/dev/null || break
    victim=$(find_target "$tmp" "$driver")
    if [[ -n $victim ]] && kill -KILL "$victim" 2>/dev/null; then
      ((hits++))
      killed=1
      what="SIGKILL to $target $victim after ${delay_ms} ms"
      break
    fi
    sleep 0.02
  done
  rc=""
  for ((t = 0; t < bound_s * 10; t++)); do
    if ! kill -0 "$driver" 2>/dev/null; then
      wait "$driver"
      rc=$?
      break
    fi
    sleep 0.1
  done
  # A run that ended before the signal shows how long runs take on this machine now: later
  # delays stay within three quarters of it, so that the next runs are hit.
  if ((!killed)) && [[ -n $rc ]]; then
    ran_ms=$(($(now_ms) - started_ms))
    if ((ran_ms * 3 / 4 < max_delay_ms && ran_ms * 3 / 4 > 100)); then
      max_delay_ms=$((ran_ms * 3 / 4))
      what+=" (the run took ${ran_ms} ms: later delays up to ${max_delay_ms} ms)"
    fi
  fi
  if [[ -z $rc ]]; then
    echo "run $i: $what: FAIL: etwh still running after ${bound_s} s (a hang); its output:"
    sed 's/^/    /' "$tmp.log" | tail -20
    kill -KILL "$driver" 2>/dev/null
    wait "$driver"
    rc=hang
    ((failures++))
  fi
  left=-1
  for ((t = 0; t < 20; t++)); do  # up to 1 s
    left=$(members "$tmp" | wc -l)
    ((left == 0)) && break
    sleep 0.05
  done
  echo "run $i: $what; exit $rc; processes left after 1 s: $left"
  if ((left != 0)); then
    echo "  FAIL: still running:"
    members "$tmp" | sed 's/^/    /'
    ((failures++))
  fi
  # `etwh stress` talks to a broker before its run (the stale-session check): killed then, that
  # broker served no session of the run, and its successor did (the report names it by pid).
  if ((killed)) && [[ $target == broker && $command == stress && -s $report ]] &&
     served_by_another "$report" "$victim"; then
    killed=0
    echo "  (broker $victim ended before the run's sessions started: an ordinary run)"
  fi
  # A run the signal missed (it ended first) is an ordinary run: it must exit 0.
  expected=$allowed
  ((killed)) || expected=0
  if [[ $target != driver && $rc != hang && ,$expected, != *,$rc,* ]]; then
    echo "  FAIL: exit code $rc, expected one of $expected; its output:"
    sed 's/^/    /' "$tmp.log" | tail -20
    ((failures++))
  fi
  if [[ -s $report ]]; then
    ((reports++))
    if check_report "$report" | sed 's/^/  FAIL: /' | grep .; then ((failures++)); fi
  fi
  kill_members "$tmp"
done

echo "$target: $iterations runs, $hits with a $target killed, $reports reports checked," \
     "$failures failures"
verdict "$hits" "$failures" "no $target was ever killed"
