# Sourced by the tests/hostile/ scripts: run one etwh command bounded in time and memory and
# judge how it refused a hostile file. The sourcing script sets $work (a private folder) and
# counts $failures.

readonly kLimitSeconds=5 kLimitKib=$((200 * 1024))

# run_bounded COMMAND...: runs COMMAND (its output in $out and $err) and sets $status, or
# $verdict when it outlived 5 s or grew past 200 MB (then it is killed, its process group with it).
run_bounded() {
  out="$work/out.$$" err="$work/err.$$" verdict=""
  setsid "$@" >"$out" 2>"$err" </dev/null &
  local pid=$! peak=0 rss ticks=0
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
    ((${rss:-0} > peak)) && peak=${rss:-0}
    if ((peak > kLimitKib)); then
      verdict="over 200 MB (${peak} KiB)"
    elif ((ticks >= kLimitSeconds * 20)); then
      verdict="still running after ${kLimitSeconds} s"
    fi
    if [[ -n $verdict ]]; then
      kill -KILL -- "-$pid" 2>/dev/null
      break
    fi
    sleep 0.05
    ticks=$((ticks + 1))
  done
  wait "$pid"
  status=$?
}

# judge LABEL: counts a failure and shows the error output when $verdict says one.
judge() {
  if [[ -n $verdict ]]; then
    echo "FAIL $1: $verdict"
    sed 's/^/  | /' "$err" | head -5
    failures=$((failures + 1))
  else
    echo "ok   $1: $(head -1 "$err")"
  fi
}

# expect_refused LABEL NAMED -- COMMAND...: COMMAND must exit 2 within 5 s, with NAMED (the
# hostile path) in its error output, its resident memory staying under 200 MB.
expect_refused() {
  local label=$1 named=$2
  shift 3
  run_bounded "$@"
  if [[ -z $verdict && $status -ne 2 ]]; then
    verdict="exit $status, not 2"
  elif [[ -z $verdict ]] && ! grep -qF -- "$named" "$err"; then
    verdict="the error does not name $named"
  fi
  judge "$label"
}

# expect_exit LABEL STATUS -- COMMAND...: COMMAND must exit STATUS within 5 s and 200 MB.
expect_exit() {
  local label=$1 expected=$2
  shift 3
  run_bounded "$@"
  [[ -z $verdict && $status -ne $expected ]] && verdict="exit $status, not $expected"
  judge "$label"
}

# What `path` is, without following it, to see that a refusal left it as it was.
shape_of() {
  stat -c '%F %t:%T %i' "$1" 2>/dev/null || echo absent
  [[ -L $1 ]] && readlink "$1"
}
