#!/usr/bin/env bash
# Nothing outlives the harness. Starts an etwh command ITERATIONS times, sends
# it SIGNAL after a random delay of up to MAX_DELAY_MS, and counts what that run left behind.
#
#   signal_driver.sh SIGNAL ITERATIONS MAX_DELAY_MS EXPECT_EXIT -- ETWH ARGS...
#
# Even runs count the delay from the first child seen instead of the start.
# SIGNAL KILL: within 1 s no agent and no stress writer of the run may remain (they see the
# end of their stdin or get the parent-death signal). TERM or INT: the driver must exit with
# EXPECT_EXIT once it has ended its children, stopped its sessions and removed its temporary
# ETWRT_HOME; then too no agent or writer may remain.
# A run's processes are found by its private home: each iteration gives etwh a TMPDIR of its
# own, and etwh puts the run's ETWRT_HOME (etwh-home-*) there, which every child inherits (the
# self-test puts one home per run there).
# The run's broker must be gone within 1 s too: etwh owns its private home
# (ETWRT_BROKER_OWNER_PID), so the broker stops the run's sessions and exits when etwh ends.
# ETWH_OUTLIVE_GIVEN_HOME=1 gives etwh the home instead (ETWRT_HOME set, as a user or CI may):
# a broker etwh starts there must end with etwh all the same.
# ETWH_OUTLIVE_ITERATIONS, when set, replaces ITERATIONS (the CTests run 3 to 20;
# `ETWH_OUTLIVE_ITERATIONS=20 ctest -L outlive` runs 20 of each).
set -u

signal=$1 iterations=${ETWH_OUTLIVE_ITERATIONS:-$2} max_delay_ms=$3 expect_exit=$4
given_home=${ETWH_OUTLIVE_GIVEN_HOME:-0}
shift 5
work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-outlive-XXXXXX")

# members, kill_members and cleanup: the run's processes, found by its home; verdict.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/run_processes.sh"

# How many of the run's processes are alive (the driver aside): agents, writers, brokers, an
# observed program, the `etwh run`s of a self-test.
count_children() {
  members "$1" | awk -v driver="$driver" '$1 != driver' | wc -l
}

trap cleanup EXIT

failures=0 hits=0 brokers_left=0
for ((i = 1; i <= iterations; i++)); do
  tmp="$work/run-$i"
  mkdir "$tmp"
  delay_ms=$((50 + RANDOM % (max_delay_ms - 49)))
  # A background job of a script starts with SIGINT ignored; the driver must start as a user's
  # would (default action), so that a signal before its handlers are set still ends it (130).
  home_env=(-u ETWRT_HOME)
  if ((given_home)); then
    mkdir -m 700 "$tmp/etwh-home-given"
    home_env=(ETWRT_HOME="$tmp/etwh-home-given")
  fi
  env --default-signal=INT -u ETWRT_BROKER_OWNER_PID "${home_env[@]}" TMPDIR="$tmp" "$@" \
    >"$tmp.log" 2>&1 &
  driver=$!
  # Odd runs count the delay from the start (a signal may come before any child or handler);
  # even runs from the first child seen, so that a slow start (a sanitizer build, a loaded
  # machine) still gets signals while children run.
  if ((i % 2 == 0)); then
    for ((t = 0; t < 600; t++)); do  # up to 30 s
      ((t % 5 == 0)) && (($(count_children "$tmp") > 0)) && break
      kill -0 "$driver" 2>/dev/null || break
      sleep 0.01
    done
  fi
  sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
  alive_at_signal=$(count_children "$tmp")
  signal_ns=$(date +%s%N)  # the signal leaves after this
  if ! kill "-$signal" "$driver" 2>/dev/null; then
    echo "run $i: the driver had ended before ${delay_ms} ms; nothing to signal"
    wait "$driver"
    continue
  fi
  wait "$driver"
  rc=$?
  # kill succeeds on a driver that has finished but is not yet reaped (or is in exit, where
  # signals no longer act): its exit 0 is right if its last output came before the signal.
  expected=$expect_exit
  if [[ $signal != KILL ]] && ((rc == 0)) &&
     (($(stat -c %.9Y "$tmp.log" | tr -d .) < signal_ns)); then
    echo "run $i: the driver wrote its last line before the signal came: it had ended (exit 0)"
    expected=0
  fi
  ((alive_at_signal > 0)) && ((hits++))
  left=-1
  for ((t = 0; t < 20; t++)); do  # up to 1 s
    left=$(count_children "$tmp")
    ((left == 0)) && break
    sleep 0.05
  done
  brokers=$(members "$tmp" | grep -c ' etwrt-broker$')
  ((brokers_left += brokers))
  homes=$(find "$tmp" -maxdepth 1 -name 'etwh-home-*' | wc -l)
  echo "run $i: SIG$signal after ${delay_ms} ms with $alive_at_signal children running;" \
       "exit $rc; processes left after 1 s: $left (brokers: $brokers); homes left: $homes"
  if ((left != 0)); then
    echo "  FAIL: still running:"
    members "$tmp" | sed 's/^/    /'
    ((failures++))
  fi
  if [[ $signal != KILL ]]; then
    if ((rc != expected)); then
      echo "  FAIL: exit code $rc, expected $expected; its output:"
      sed 's/^/    /' "$tmp.log" | tail -20
      ((failures++))
    fi
    if ((homes != 0)); then
      echo "  FAIL: the run's ETWRT_HOME was not removed"
      ((failures++))
    fi
  fi
  kill_members "$tmp"
done

echo "$iterations runs, $hits signalled while children ran, $failures failures," \
     "$brokers_left brokers outlived their run"
verdict "$hits" "$failures" "no run was signalled while its children ran"
