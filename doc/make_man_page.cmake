# Runs in script mode (cmake -P) at build time: the etwh(1) man page from the CLI's own help, with
# help2man; each command's --help goes into a COMMANDS section. Inputs: ETWH, HELP2MAN, OUT,
# WORK_DIR.
foreach(var ETWH HELP2MAN OUT WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "make_man_page.cmake: ${var} is not set")
  endif()
endforeach()

# A command's help as preformatted roff.
function(help_as_roff out)
  execute_process(COMMAND "${ETWH}" ${ARGN} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "etwh ${ARGN} --help exited with ${rc}")
  endif()
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  set(${out} ".nf\n${help}.fi\n" PARENT_SCOPE)
endfunction()

set(include "[COMMANDS]\nEach command takes the global options too, before or after it.\n")
# A command's subcommands (expectations update) get a section of their own.
foreach(command list run compare report expectations "expectations update" stress selftest observe judge)
  string(REPLACE " " ";" words "${command}")
  help_as_roff(text ${words})
  string(APPEND include ".SS \"etwh ${command}\"\n${text}")
endforeach()
string(APPEND include "[PATTERNS]
The patterns of run --filter, compare --only and stress --only are searched in each name (anchor
them with ^ and $) in time linear in the pattern and the name, so that no pattern can hang a run.
On Linux their syntax is RE2's (the Debian package libre2). The Windows build has no RE2: its own
matcher takes a subset of that syntax, on bytes: literals, . (any byte but a newline), classes
[a-z_] and [^...], a backslash before d, w, s (digits, word characters, white space), D, W, S
(their complements), n, t, r, f, v or any punctuation, ^ and $ (the name's start and end), groups
(...) and (?:...), alternation |, and repetition * + ? (a lazy *? is the same for a search);
counted repetition {n,m}, flags (?i), Unicode classes, other escapes and a pattern over 1,000
bytes are refused, exit 2.
[EXIT STATUS]
0 when every result is what the platform's expectations say; 1 when some are not (a FAIL, or an
XPASS: a stale expectation), or a mutant survives (selftest); 2 for bad input or a harness fault.
[FILES]
.TP
.I share/etwh
the rule catalog, the scenarios, the per-platform expectations and the mutant registry, found
relative to the installed program.
.TP
.I lib/etwh/mutants
the mutant build of etwrt and of the example providers, for
.BR \"etwh selftest\" .
[ENVIRONMENT]
Every variable etwh, its agents and writers read, and those of etwrt that etwh sets or passes on
(the CTest etwh_man_environment checks that each variable the source reads is here).
.TP
.B ETWRT_HOME
the etwrt broker's folder; unset, each run, stress run and observed program uses a private one
in a fresh temporary folder, removed at the end.
.TP
.B ETWRT_BROKER
the etwrt-broker executable the library starts (default: libexec/etwrt-broker beside
libetwrt); etwh selftest sets it to the mutant build's broker.
.TP
.B ETWRT_BROKER_IDLE_MS
how long an idle broker waits before it exits (default 3000).
.TP
.B ETWRT_BROKER_OWNER_PID
set by etwh for its private broker: the broker ends with that process.
.TP
.B ETWRT_MAX_SESSIONS
how many sessions etwrt lets run at once (default 64); a StartTrace beyond it fails with
ERROR_NO_SYSTEM_RESOURCES, a HARNESS_ERROR unless the case expects it.
.TP
.B ETWRT_DENY_CONTROL
1: etwrt refuses to let this process control sessions, as Windows refuses a user who is neither
administrator nor in Performance Log Users; etwh run and etwh stress then say so and exit 2.
.TP
.B ETWRT_OBSERVE_SOCKET
set by etwh observe for the program it runs: where that program's libetwrt reports what it does.
.TP
.B ETWRT_MUTANT
set by etwh selftest for each run of the mutant build: the defect it selects.
.TP
.B LD_LIBRARY_PATH
etwh selftest puts the mutant build's library folder in front of it for each mutant's run.
.TP
.B NO_COLOR
set and not empty: no colour on the console (unless --color always).
.TP
.B COLUMNS
the console's width: etwh run cuts its lines to it (else to the terminal's width; a pipe or a
log, and --verbose, keep them whole).
.TP
.B PATH
where etwh stress looks for fio, which measures the disk's sequential write rate beside a
profile's file sessions (without fio the run says so and gives no ratio).
.TP
.B ETWH_STRESS_WRITER_SPIN
N: the stress writer busies itself N empty iterations after each write, a planted slowdown to
check a regression gate (harness/compare/README.md).
.TP
.B ETWH_STRESS_WRITER_MUTANT
undercount: the stress writer reports one write fewer than it made, a planted defect the
stress run must catch.
")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/etwh.h2m" "${include}")

get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --section=1 --source=etwh
          "--name=conformance and stress harness for Event Tracing for Windows"
          "--include=${WORK_DIR}/etwh.h2m" "--output=${OUT}.tmp" "${ETWH}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
