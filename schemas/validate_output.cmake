# Runs COMMAND1, COMMAND2 and COMMAND3 in turn ('|'-separated; the last two optional), which must exit with
# 0 or 1 (a verdict, not bad input), then validates OUTPUT against SCHEMA with CHECKER
# (etwh_schema_check): the real output of etwh held to the published schema. With CHECK (a
# '|'-separated command) instead of CHECKER, that command judges the output (exit 0: valid).
# With STDOUT_IS_OUTPUT, what the commands print on stdout is the output (written to OUTPUT).
foreach(cmd COMMAND1 COMMAND2 COMMAND3)
  if(NOT ${cmd})
    continue()
  endif()
  string(REPLACE "|" ";" command "${${cmd}}")
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(STDOUT_IS_OUTPUT)
    file(WRITE ${OUTPUT} "${out}")
  endif()
  if(NOT rc MATCHES "^[01]$")
    message(FATAL_ERROR "${${cmd}}: exit code ${rc}")
  endif()
endforeach()
if(CHECK)
  string(REPLACE "|" ";" check "${CHECK}")
else()
  set(check ${CHECKER} ${SCHEMA} ${OUTPUT})
endif()
execute_process(COMMAND ${check} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUTPUT} does not follow ${SCHEMA}${CHECK}")
endif()
