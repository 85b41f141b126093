#!/usr/bin/env bash
# `etwh run` stops the sessions an earlier, crashed run left (harness/environment/stale_sessions.h), and only
# those. In a shared ETWRT_HOME (sessions outlive their controller, as on Windows; its broker is
# owned by this script, so that nothing outlives the test however it ends) an agent starts three
# sessions and crashes: one named as a run whose process has ended, one named
# as a run whose process is alive (this script), one of another program. Then `etwh run` must
# say it stopped the first, list it (and only it) in its --json report's run_info.stale_sessions,
# and only the first may be gone.
#
#   stale_sessions.sh ETWH ETWH_AGENT SCENARIO
set -u
etwh=$1 agent=$2 scenario=$3
home=$(mktemp -d "${TMPDIR:-/tmp}/etwh-stale-XXXXXX")
cleanup() {
  if [[ -f $home/broker.pid ]]; then kill "$(cat "$home/broker.pid")" 2>/dev/null; fi
  sleep 0.2
  rm -rf "$home"
}
trap cleanup EXIT
export ETWRT_HOME=$home
export ETWRT_BROKER_OWNER_PID=$$
unset ETWRT_DENY_CONTROL ETWRT_MAX_SESSIONS
ulimit -c 0

sh -c 'exit 0' &
dead=$!
wait "$dead"
stale="etwh-$dead-1-s" live="etwh-$$-1-s" other="someone-else-s"

# The crashed controller: its sessions stay (the agent aborts without stopping them).
{ printf '%s\n' \
  "{\"id\":1,\"op\":\"start_session\",\"session\":\"a\",\"name\":\"$stale\"}" \
  "{\"id\":2,\"op\":\"start_session\",\"session\":\"b\",\"name\":\"$live\"}" \
  "{\"id\":3,\"op\":\"start_session\",\"session\":\"c\",\"name\":\"$other\"}" \
  '{"id":4,"op":"crash"}' | "$agent" >"$home/agent1.out" 2>&1; } 2>/dev/null
if [[ $(grep -c '"status":0' "$home/agent1.out") -ne 3 ]]; then
  echo "FAIL: the agent could not start the three sessions:"; cat "$home/agent1.out"; exit 1
fi

"$etwh" run "$scenario" --json "$home/run.json" >"$home/run.out" 2>&1
rc=$?
grep '^etwh:' "$home/run.out"
if [[ $rc -ne 0 ]]; then echo "FAIL: etwh run exited $rc"; cat "$home/run.out"; exit 1; fi
if ! grep -q "etwh: stopped session $stale, left running by an earlier etwh run (process $dead has ended)" "$home/run.out"; then
  echo "FAIL: etwh run did not say it stopped $stale"; exit 1
fi
if grep -q "stopped session \($live\|$other\)" "$home/run.out"; then
  echo "FAIL: etwh run stopped a session that was not stale"; exit 1
fi

# The report says it as data: exactly the stale session, its run's pid, STOP's status 0.
reported=$(tr -d ' \n' <"$home/run.json" | grep -o '"stale_sessions":\[[^]]*\]')
if [[ $reported != "\"stale_sessions\":[{\"name\":\"$stale\",\"pid\":$dead,\"stop_status\":0}]" ]]; then
  echo "FAIL: the --json report's run_info.stale_sessions is not [$stale]: ${reported:-absent}"; exit 1
fi

# What is left: ControlTrace(QUERY) by name (4201: ERROR_WMI_INSTANCE_NOT_FOUND).
printf '%s\n' \
  "{\"id\":1,\"op\":\"control\",\"name\":\"$stale\",\"code\":0}" \
  "{\"id\":2,\"op\":\"control\",\"name\":\"$live\",\"code\":1}" \
  "{\"id\":3,\"op\":\"control\",\"name\":\"$other\",\"code\":1}" \
  '{"id":4,"op":"exit"}' | "$agent" >"$home/agent2.out" 2>&1
status_of() { grep "\"id\":$1[,}]" "$home/agent2.out" | grep -o '"status":[0-9]*' | head -1; }
if [[ $(status_of 1) != '"status":4201' ]]; then
  echo "FAIL: $stale still runs: $(status_of 1)"; cat "$home/agent2.out"; exit 1
fi
if [[ $(status_of 2) != '"status":0' || $(status_of 3) != '"status":0' ]]; then
  echo "FAIL: a session that was not stale is gone"; cat "$home/agent2.out"; exit 1
fi
echo "OK: $stale stopped and said; $live and $other left running"
