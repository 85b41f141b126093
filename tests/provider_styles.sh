#!/usr/bin/env bash
# The etwh_provider_styles test: each provider agent given runs as the subject of the provider
# cases, and every case must PASS (read from the --json report: an expected FAIL would not do).
# Usage: provider_styles.sh ETWH SCENARIO_FILE AGENT...
# Exit 0: every agent passed every case; else 1, naming the agent and the cases.
set -euo pipefail

etwh=$1 scenario=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-provider-styles-XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=0
for agent in "$@"; do
  name=$(basename "$agent")
  code=0
  "$etwh" run --subject "$agent" --json "$work/$name.json" "$scenario" > "$work/$name.out" 2>&1 ||
    code=$?
  echo "+ etwh run --subject $name $(basename "$scenario"): exit $code"
  tail -n 4 "$work/$name.out"
  if [ "$code" -ne 0 ] || ! jq -e '(.results | length) > 0 and all(.results[]; .status == "PASS")' \
                             "$work/$name.json" > /dev/null 2>&1; then
    echo "etwh_provider_styles: $name does not pass every case:" >&2
    jq -r '.results[] | select(.status != "PASS") | "  \(.id): \(.status): \(.message)"' \
      "$work/$name.json" >&2 2>/dev/null || cat "$work/$name.out" >&2
    failed=1
  fi
done
exit "$failed"
