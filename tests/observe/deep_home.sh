#!/usr/bin/env bash
# Sockets at any depth: `etwh observe` and `etwh selftest --keep DIR` with a home more than
# 200 bytes deep, past what a Unix socket address holds (107 bytes). The observation socket and
# the broker's socket lie in that home; each must still be reached (exit 0: the correct example
# program passes, the self-test kills its mutant).
#
#   deep_home.sh ETWH OBSERVE_EXAMPLE SCENARIO
set -u
etwh=$1 example=$2 scenario=$3
base=$(mktemp -d "${TMPDIR:-/tmp}/etwh-deep-XXXXXX")
trap 'rm -rf "$base"' EXIT
deep=$base
while ((${#deep} < 200)); do deep+=/a-folder-whose-name-makes-the-path-long; done
mkdir -p "$deep"
chmod 700 "$deep"
failures=0

# expect_success LABEL COMMAND...: COMMAND must exit 0 within 120 s.
expect_success() {
  local label=$1
  shift
  timeout 120 "$@" >"$base/log" 2>&1
  local status=$?
  if ((status != 0)); then
    echo "FAIL $label: exit $status"
    sed 's/^/  | /' "$base/log" | tail -15
    failures=$((failures + 1))
  else
    echo "ok   $label"
  fi
}

echo "home: $deep (${#deep} bytes)"
expect_success "observe, ETWRT_HOME ${#deep} bytes deep" \
  env ETWRT_HOME="$deep" "$etwh" observe --quiet -- "$example" 300
expect_success "observe, its private home in a TMPDIR ${#deep} bytes deep" \
  env -u ETWRT_HOME TMPDIR="$deep" "$etwh" observe --quiet -- "$example" 300
# The self-test's runs, each with its home in the kept folder: one scenario for the clean run,
# one observe mutant.
mkdir "$base/scenarios"
cp "$scenario" "$base/scenarios/"
expect_success "selftest --keep ${#deep}-byte folder" \
  env -u ETWRT_HOME "$etwh" --scenarios "$base/scenarios" selftest --only observe-above-level \
  --keep "$deep/kept"

echo "$failures failures"
((failures == 0))
