# The bad stress fixture must be refused for its planted defect alone (a count written as a
# string): with that undone it must follow the schema, so etwh_schema_check_rejects_bad_stress
# keeps proving the checker can fail as the schema grows.
#   cmake -DCHECKER=<etwh_schema_check> -DSCHEMA=<schema> -DBAD=<fixture> -DOUTPUT=<file> -P planted_defect.cmake
cmake_minimum_required(VERSION 3.25)
file(READ "${BAD}" text)
string(REGEX REPLACE "\"written\": \"([0-9]+)\"" "\"written\": \\1" undone "${text}")
if(undone STREQUAL text)
  message(FATAL_ERROR "${BAD}: no planted defect (a \"written\" count as a string) found")
endif()
file(WRITE "${OUTPUT}" "${undone}")
execute_process(COMMAND "${CHECKER}" "${SCHEMA}" "${OUTPUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BAD} with its planted defect undone (${OUTPUT}) still does not follow "
    "${SCHEMA}: regenerate it from a real `etwh stress` run and plant the defect again")
endif()
