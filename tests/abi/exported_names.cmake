# libetwrt's exported C names are the Win32 API's (they start with an upper-case letter), the
# 2-byte forms of the C library's wide functions under --wrap's names (__wrap_<name>), and
# etwrt's own (etwrt_...). A C library name (wcscpy_s, wprintf, ...) exported by libetwrt would
# take the place of another library's in the whole process. Run: cmake -DLIBRARY=<libetwrt.so>
# -DNM=<nm> -P exported_names.cmake
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(clashing "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" name "${line}")
  if(name STREQUAL "" OR name MATCHES "^[A-Z]" OR name MATCHES "^(_Z|__wrap_|etwrt_)")
    continue()
  endif()
  # What a sanitizer build adds (ODR indicators, coverage section bounds) is no C library name.
  if(name MATCHES "^(__odr_asan_gen_|__start___sancov|__stop___sancov|__asan_|__ubsan_|__tsan_)")
    continue()
  endif()
  list(APPEND clashing ${name})
endforeach()
if(clashing)
  message(FATAL_ERROR "libetwrt exports C library names: ${clashing}")
endif()
message(STATUS "libetwrt exports no C library name")
