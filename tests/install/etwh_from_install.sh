#!/usr/bin/env bash
# The etwh_from_install test: `cmake --install` the build into a temporary prefix, then run the
# installed etwh with the build and source trees hidden (a private mount namespace with an empty
# tmpfs over each), so that nothing can come from them: the library (RUNPATH), the agents, the
# data (catalog, scenarios, expectations, mutants.json) and the mutant build of `etwh selftest`.
# Usage: etwh_from_install.sh BUILD_DIR SOURCE_DIR MUTANT...
# Exit 0: all ran as expected; 77: skipped (no mount namespace here), with the reason; else 1.
set -euo pipefail

build=$(realpath "$1")
source=$(realpath "$2")
shift 2
mutants=("$@")
readonly skip=77

prefix=$(mktemp -d "${TMPDIR:-/tmp}/etwh-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
case "$prefix/" in
  "$build"/* | "$source"/*)
    echo "etwh_from_install: the prefix $prefix would be hidden too; set TMPDIR elsewhere" >&2
    exit 1 ;;
esac

hidden=("$source")
[[ "$build/" == "$source"/* ]] || hidden+=("$build")

# Hiding needs a mount namespace (root, or unprivileged user namespaces): probe first.
if ! probe=$(unshare --mount --propagation private \
               mount -t tmpfs -o size=64k etwh-hidden "${hidden[0]}" 2>&1); then
  echo "etwh_from_install: SKIPPED: cannot hide the build and source trees" \
       "(unshare --mount and a tmpfs mount are not permitted here: $probe)"
  exit "$skip"
fi

cmake --install "$build" --prefix "$prefix" > "$prefix.install.log" 2>&1 || {
  cat "$prefix.install.log" >&2; rm -f "$prefix.install.log"; exit 1; }
rm -f "$prefix.install.log"

# Runs in the private namespace: $1 the prefix, then the folders to hide, "--", the mutants.
inner=$(cat <<'EOF'
set -euo pipefail
prefix=$1; shift
while [ "$1" != "--" ]; do
  mount -t tmpfs -o size=64k,mode=0555 etwh-hidden "$1"
  [ -z "$(ls -A "$1")" ] || { echo "etwh_from_install: $1 is still visible" >&2; exit 1; }
  shift
done
shift
cd /
unset ETWRT_HOME ETWRT_BROKER ETWRT_MUTANT LD_LIBRARY_PATH
etwh=$prefix/bin/etwh

# Runs "$@", shows its output, and fails unless it exits with $1 and prints a line matching $2.
expect() {
  local want_exit=$1 pattern=$2; shift 2
  echo "+ ${*#$prefix/}"
  local out code=0
  out=$("$@" 2>&1) || code=$?
  printf '%s\n' "$out" | tail -n 25
  if [ "$code" -ne "$want_exit" ]; then
    echo "etwh_from_install: '$*' exited with $code, expected $want_exit" >&2; exit 1
  fi
  if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
    echo "etwh_from_install: '$*' printed no line matching '$pattern'" >&2; exit 1
  fi
}

expect 0 '^etwh [0-9]+\.[0-9]+\.[0-9]+$' "$etwh" --version
expect 0 '^SES-MAX-8 +runtime +1 ' "$etwh" list
expect 0 'cases, 0 not as expected' "$etwh" run
only=()
for m in "$@"; do only+=(--only "$m"); done
expect 0 "of $# mutants killed" "$etwh" selftest "${only[@]}"
EOF
)
unshare --mount --propagation private bash -c "$inner" inner "$prefix" "${hidden[@]}" -- \
  "${mutants[@]}"
