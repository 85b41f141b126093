# Sanitizer and fuzzing builds (ci/sanitizers, ci/fuzz; fuzz/README.md). Compile and link
# flags for every target of the build, set before any target exists.
#   ETWH_SANITIZE=address,undefined | thread   the whole build under those sanitizers
#   ETWH_FUZZ=ON                                clang only: every object instrumented for
#       libFuzzer (fuzzer-no-link) under ASan and UBSan; fuzz/ links its targets with libFuzzer.
# UBSan findings abort (no recovery), so that a test or a fuzz run cannot pass over one.

set(ETWH_SANITIZE "" CACHE STRING
  "Sanitizers for the whole build: empty, address,undefined, or thread")
option(ETWH_FUZZ "Build the libFuzzer targets of fuzz/ (clang; implies ASan and UBSan)" OFF)

if(ETWH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ETWH_FUZZ=ON needs clang (libFuzzer): configure with "
      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16, as ci/fuzz does")
  endif()
  if(ETWH_SANITIZE STREQUAL "")
    set(ETWH_SANITIZE "address,undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(NOT ETWH_SANITIZE STREQUAL "")
  if(NOT ETWH_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "ETWH_SANITIZE=\"${ETWH_SANITIZE}\": expected address,undefined, "
      "address, undefined or thread")
  endif()
  add_compile_options(-fsanitize=${ETWH_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${ETWH_SANITIZE})
  if(ETWH_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
