# bash completion for etwh: commands, their options, scenario and profile paths, and the names
# --platform, --only, --rule and --color take. Plain bash (complete/compgen): bash-completion is not needed.
# Installed as share/bash-completion/completions/etwh. The option lists follow `etwh <command>
# --help`; the etwh_completion CTest fails when they drift apart.

_etwh_global_options="--help --version --catalog --scenarios"
_etwh_commands="list run compare report expectations stress selftest observe judge"

# The subcommands of a command (`etwh expectations update`).
_etwh_subcommands() {
  case $1 in
    expectations) echo "update" ;;
  esac
}

# The options of one command or subcommand ("expectations update"), without the global ones
# (--help is one).
_etwh_command_options() {
  case $1 in
    list) echo "--json" ;;
    run) echo "--json --junit --agent --subject --platform --expectations --filter --rule --jobs" \
           "--repeat --shuffle --seed --quiet --verbose --color --trace --markdown --sarif" ;;
    compare) echo "--alpha --min-effect --only --markdown --json" ;;
    report) echo "--output --title" ;;
    "expectations update") echo "--platform --from --file" ;;
    stress) echo "--json --sweep --writer --repetitions --series-ms --baseline --alpha --min-effect --only --trace --markdown" ;;
    selftest) echo "--mutants --mutant-dir --only --keep --json --jobs --run-timeout" ;;
    observe) echo "--schedule --json --junit --timeout --quiet --verbose" ;;
    judge) echo "--provider --manifest --json --junit --markdown --sarif --quiet --verbose" ;;
  esac
}

# The mutant names of the registry installed beside etwh (share/etwh/mutants/mutants.json).
_etwh_mutant_names() {
  local etwh registry
  etwh=$(type -P "$1") || return 0
  registry="$(dirname "$(dirname "$etwh")")/share/etwh/mutants/mutants.json"
  [ -r "$registry" ] && sed -n 's/.*"name": *"\([a-z0-9-]*\)".*/\1/p' "$registry"
}

# The rule IDs of the catalog installed beside etwh (share/etwh/catalog/rules.json).
_etwh_rule_ids() {
  local etwh catalog
  etwh=$(type -P "$1") || return 0
  catalog="$(dirname "$(dirname "$etwh")")/share/etwh/catalog/rules.json"
  [ -r "$catalog" ] && sed -n 's/.*"id": *"\([A-Z0-9-]*\)".*/\1/p' "$catalog"
}

# Files matching a glob and folders, one per line (names with spaces survive).
_etwh_paths() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -d -- "$2"; compgen -f -X "!$1" -- "$2"))
  compopt -o filenames 2>/dev/null
}

_etwh() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command="" i subs=""
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [ -z "$command" ]; then
      case " $_etwh_commands " in *" ${COMP_WORDS[i]} "*) command=${COMP_WORDS[i]} ;; esac
      subs=$(_etwh_subcommands "$command")
    elif [ -n "$subs" ]; then
      case " $subs " in *" ${COMP_WORDS[i]} "*) command="$command ${COMP_WORDS[i]}"; subs="" ;; esac
    fi
  done

  # The value of an option.
  case $prev in
    --catalog | --expectations | --mutants | --json | --junit | --sarif | --trace | --from | --file | --baseline | --schedule)
      _etwh_paths '*.json' "$cur"; return ;;
    -o | --output) _etwh_paths '*.html' "$cur"; return ;;
    --markdown) _etwh_paths '*.md' "$cur"; return ;;
    --agent | --subject | --writer) _etwh_paths '*' "$cur"; return ;;
    --scenarios | --mutant-dir | --keep)
      local IFS=$'\n'; COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null
      return ;;
    --platform) COMPREPLY=($(compgen -W "etwrt wine windows" -- "$cur")); return ;;
    --only)  # selftest: a mutant's name; compare and stress: a regular expression
      [ "$command" = selftest ] &&
        COMPREPLY=($(compgen -W "$(_etwh_mutant_names "${COMP_WORDS[0]}")" -- "$cur"))
      return ;;
    --rule) COMPREPLY=($(compgen -W "$(_etwh_rule_ids "${COMP_WORDS[0]}")" -- "$cur")); return ;;
    --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    --sweep | --jobs | -j | --run-timeout | --filter | --repeat | --seed | --title | --alpha | \
      --min-effect | --repetitions | --series-ms) return ;;
  esac

  if [ -z "$command" ]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$_etwh_global_options" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$_etwh_commands" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_etwh_command_options "$command") $_etwh_global_options" -- "$cur"))
    return
  fi
  if [ -n "$subs" ]; then  # a command whose subcommand is not typed yet
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    return
  fi
  # Positional arguments: scenario files or folders (run), stress profiles (stress), result
  # files (compare, report).
  case $command in
    run | stress | compare | report) _etwh_paths '*.json' "$cur" ;;
  esac
}

complete -F _etwh etwh
