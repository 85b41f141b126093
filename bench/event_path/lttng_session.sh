#!/bin/sh
# Runs a private LTTng session daemon and one snapshot-mode session for etwh_bench_event_path,
# inside a mount namespace of its own (started with `unshare --mount --propagation private`).
# As root, lttng-sessiond and lttng use the fixed rundir /var/run/lttng and the global wait
# object /dev/shm/lttng-ust-wait-8; a tmpfs over /run and one over /dev/shm in this namespace
# make those ours alone, so no system daemon is seen or touched (ring buffers reach the
# application as file descriptors, whatever /dev/shm it sees). The daemon's
# application socket is put where liblttng-ust looks for a per-user daemon, under LTTNG_HOME,
# which the benchmark process (outside the namespace) shares.
# Usage: lttng_session.sh DIR EVENT. Prints "ready" once the session is started, then waits
# for its standard input to close, and stops, destroys and kills everything it started.
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

# Snapshot mode: overwrite-mode ring buffers that no consumer drains while the benchmark runs,
# so the timed cost is the tracepoint's full write path, never a discarded event.
lttng create etwh-bench --snapshot --output="$dir/snapshot"
lttng enable-event --userspace "$event"
lttng start
echo ready >&3

cat >/dev/null <&0 || true
lttng stop
lttng destroy
