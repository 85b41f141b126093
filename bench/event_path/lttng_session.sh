#!/bin/sh
# Runs a private LTTng session daemon and two sessions for etwh_bench_event_path,
# inside a mount namespace of its own (started with `unshare --mount --propagation private`).
# As root, lttng-sessiond and lttng use the fixed rundir /var/run/lttng and the global wait
# object /dev/shm/lttng-ust-wait-8; a tmpfs over /run and one over /dev/shm in this namespace
# make those ours alone, so no system daemon is seen or touched (ring buffers reach the
# application as file descriptors, whatever /dev/shm it sees). The daemon's
# application socket is put where liblttng-ust looks for a per-user daemon, under LTTNG_HOME,
# which the benchmark process (outside the namespace) shares.
# Usage: lttng_session.sh DIR EVENT. Prints "ready" once the first session is started, then
# answers commands on its standard input (below) until it closes, and then stops, destroys
# and kills everything it started.
# Progress and errors go to DIR/lttng.log.
set -eu
dir=$1
event=$2
exec 3>&1 >"$dir/lttng.log" 2>&1

mount -t tmpfs etwh-bench-lttng /run
mount -t tmpfs etwh-bench-lttng-shm /dev/shm
export LTTNG_HOME="$dir/home"
mkdir -p "$LTTNG_HOME/.lttng"

lttng-sessiond --daemonize --no-kernel --apps-sock="$LTTNG_HOME/.lttng/lttng-ust-sock-8"
pid=$(cat /run/lttng/lttng-sessiond.pid)
stop_daemon() {
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
trap stop_daemon EXIT

# Two sessions enable the event; one runs at a time. etwh-bench-snapshot (started first):
# overwrite-mode ring buffers that no consumer drains while the benchmark runs, so the timed
# cost is the tracepoint's full write path, never a discarded event. etwh-bench-file: the
# default discard mode, drained by lttng-consumerd into DIR/trace, the counterpart of a
# realtime session drained by its consumer (it competes for the same two cores).
lttng create etwh-bench-snapshot --snapshot --output="$dir/snapshot"
lttng enable-event --userspace --session=etwh-bench-snapshot "$event"
lttng create etwh-bench-file --output="$dir/trace"
lttng enable-event --userspace --session=etwh-bench-file "$event"
lttng start etwh-bench-snapshot
echo ready >&3

# Commands, one per line: "file" switches to the file session; "discarded" stops it (which
# makes its statistics final), prints its discarded-event count and starts it again.
while read -r command; do
  case $command in
    file)
      lttng stop etwh-bench-snapshot
      lttng start etwh-bench-file
      echo ok >&3 ;;
    discarded)
      lttng stop etwh-bench-file
      n=$(lttng list etwh-bench-file | sed -n 's/^ *Discarded events: *\([0-9]*\).*/\1/p' | head -n 1)
      lttng start etwh-bench-file
      echo "${n:-unknown}" >&3 ;;
    *)
      echo "unknown command" >&3 ;;
  esac
done
lttng stop etwh-bench-snapshot || true
lttng stop etwh-bench-file || true
lttng destroy --all
