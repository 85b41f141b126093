# `etwh stress` with consumer.latency_every: runs PROFILE (one writer, nothing lost, latency_every
# N) and holds its JSON to the rule: every record delivered and counted, and the records timed
# (the latency histogram's count) exactly those whose sequence number is a multiple of N, that is
# ceil(delivered / N); the latency figures are those records'.
#   cmake -DETWH=<etwh> -DPROFILE=<profile> -DOUT=<json> -P stress_timed_every.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${ETWH}" stress "${PROFILE}" --json "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "etwh stress exited ${rc}")
endif()
if(NOT "${out}" MATCHES "; latency of 1 record in 16\\)")
  message(FATAL_ERROR "the console table does not say that one record in 16 was timed")
endif()
file(READ "${OUT}" doc)
string(JSON session GET "${doc}" results 0 sessions 0)
string(JSON written GET "${session}" written)
string(JSON delivered GET "${session}" delivered)
string(JSON every GET "${session}" latency_us timed_every)
string(JSON timed GET "${session}" latency_histogram count)
string(JSON p50 GET "${session}" latency_us p50)
if(NOT every EQUAL 16 OR NOT delivered EQUAL written OR delivered EQUAL 0)
  message(FATAL_ERROR "timed_every ${every}, written ${written}, delivered ${delivered}")
endif()
math(EXPR want "(${delivered} + ${every} - 1) / ${every}")
if(NOT timed EQUAL want)
  message(FATAL_ERROR "${timed} records timed, expected ${want} (one in ${every} of ${delivered})")
endif()
if(p50 EQUAL 0)
  message(FATAL_ERROR "latency p50 is 0: the timed records were not timed")
endif()
message(STATUS "${delivered} delivered, ${timed} timed, p50 ${p50} us")
