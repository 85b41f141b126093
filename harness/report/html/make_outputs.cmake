# The inputs of the browser test, all real: `etwh run` of sourceid.json on etwrt (beside the real
# Wine report of the same cases, WINE_REPORT, and with EXPECTATIONS that make one case XPASS),
# the run's and a stress run's --trace timelines, three stress profiles with a sweep over their
# duration, two short stress runs of one profile and their `etwh compare`; then `etwh report`
# over all of them into OUT/report.html. Also: a bad input gets exit 2 and no page.
#   cmake -DETWH=... -DSOURCE=<repo> -DOUT=<dir> -DWINE_REPORT=... -DEXPECTATIONS=... -DBAD_REPORT=...
#     -P make_outputs.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

function(etwh_step ok_codes)
  execute_process(COMMAND "${ETWH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc IN_LIST ok_codes)
    message(FATAL_ERROR "etwh ${ARGN}: exit ${rc}\n${out}\n${err}")
  endif()
endfunction()

set(stress "${SOURCE}/scenarios/stress")
# A run with a failing case exits 1: still a report.
etwh_step("0;1" run "${SOURCE}/scenarios/conformance/sourceid.json" --json "${OUT}/etwrt.json"
  --trace "${OUT}/run.trace.json")
# The same with one case said to fail (it passes: XPASS), for a failure the matrix shows first.
etwh_step("1" run "${SOURCE}/scenarios/conformance/sourceid.json" --json "${OUT}/xpass.json"
  --expectations "${EXPECTATIONS}")
etwh_step("0" stress "${stress}/fast_steady.json" "${stress}/bursty.json"
  "${stress}/slow_consumer.json" --sweep duration_ms=200,400 --json "${OUT}/stress.json")
etwh_step("0" stress "${stress}/slow_consumer.json" --sweep duration_ms=200
  --trace "${OUT}/stress.trace.json")
etwh_step("0" stress "${stress}/fast_steady.json" --sweep duration_ms=200 --repetitions 3
  --json "${OUT}/old.json")
etwh_step("0" stress "${stress}/fast_steady.json" --sweep duration_ms=200 --repetitions 3
  --json "${OUT}/new.json")
etwh_step("0;1" compare "${OUT}/old.json" "${OUT}/new.json" --json "${OUT}/compare.json")
etwh_step("0" report "${OUT}/etwrt.json" "${WINE_REPORT}" "${OUT}/xpass.json" "${OUT}/stress.json"
  "${OUT}/old.json" "${OUT}/compare.json" "${OUT}/run.trace.json" "${OUT}/stress.trace.json"
  -o "${OUT}/report.html" --title "etwh report (CTest)")
if(NOT EXISTS "${OUT}/report.html")
  message(FATAL_ERROR "etwh report wrote no ${OUT}/report.html")
endif()

# Bad input: the file, line:col, the JSON pointer and the reason; exit 2; no page, no temp file.
execute_process(COMMAND "${ETWH}" report "${OUT}/etwrt.json" "${BAD_REPORT}" -o "${OUT}/bad.html"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected "bad_run.json:[0-9]+:[0-9]+: /results/1/status: expected a string, got a number")
if(NOT rc EQUAL 2 OR NOT err MATCHES "${expected}")
  message(FATAL_ERROR "etwh report on a bad file: exit ${rc}, stderr:\n${err}\nexpected exit 2 and ${expected}")
endif()
if(EXISTS "${OUT}/bad.html" OR EXISTS "${OUT}/bad.html.tmp")
  message(FATAL_ERROR "etwh report on a bad file left a page behind")
endif()
message(STATUS "wrote ${OUT}/report.html; a bad input was refused: ${err}")
