# Sourced by the tests/install scripts that hide the build and source trees (an empty tmpfs over
# each) while they use only what `cmake --install` put in a temporary folder.

# Ends the test when folder $1 lies inside the build tree $2 or the source tree $3: hiding
# those would hide it too.
require_outside_trees() {
  case "$1/" in
    "$2"/* | "$3"/*)
      echo "$(basename "$0" .sh): $1 would be hidden too; set TMPDIR elsewhere" >&2
      exit 1 ;;
  esac
}
