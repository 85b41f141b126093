# Opens the page of make_outputs.cmake in headless Chromium: a screenshot, then the DOM after the
# page's script ran, which must show the script finished (data-rendered="done"), recorded no
# error (data-errors="": the page records uncaught errors and console.error there) and drew at
# least MIN_SERIES plotted series, one of them named starting with REQUIRED_SERIES. Then the check
# must refuse four broken copies of the page (a planted script error, a planted console error,
# the charts' script never started, the wake-up floors left out of the latency CDFs): it can fail.
#   cmake -DCHROMIUM=<exe or empty> -DOUT=<dir of make_outputs> -DMIN_SERIES=N
#     -DREQUIRED_SERIES=<name> -P browser_check.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT CHROMIUM)
  message("SKIPPED: Chromium not found (Debian: apt install chromium): the page was not opened")
  return()
endif()
set(page "${OUT}/report.html")
if(NOT EXISTS "${page}")
  message(FATAL_ERROR "${page}: missing (the test etwh_report_html_outputs makes it)")
endif()
set(flags --headless --disable-gpu --no-sandbox --no-first-run --disable-dev-shm-usage
  --user-data-dir=${OUT}/chromium-profile --virtual-time-budget=5000)

# Sets `problem` in the caller to what is wrong with `file` in the browser, or "".
function(check_page file)
  execute_process(COMMAND "${CHROMIUM}" ${flags} --dump-dom "file://${file}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE log TIMEOUT 90)
  set(problem "")
  if(NOT rc EQUAL 0)
    set(problem "chromium exit ${rc}: ${log}")
  elseif(NOT dom MATCHES "data-errors=\"([^\"]*)\"")
    set(problem "no data-errors attribute: the page's error recorder did not run")
  elseif(NOT "${CMAKE_MATCH_1}" STREQUAL "")
    set(problem "script errors: ${CMAKE_MATCH_1}")
  elseif(NOT dom MATCHES "data-rendered=\"done\"")
    set(problem "the page's script did not finish drawing (no data-rendered=\"done\")")
  else()
    string(REGEX MATCHALL "<path [^>]*class=\"series" series "${dom}")
    list(LENGTH series n)
    if(n LESS MIN_SERIES)
      set(problem "${n} plotted series in the DOM, expected at least ${MIN_SERIES}")
    elseif(NOT dom MATCHES "<path [^>]*class=\"series[^>]*data-series=\"${REQUIRED_SERIES}")
      set(problem "no plotted series named \"${REQUIRED_SERIES}...\"")
    else()
      message(STATUS "${file}: ${n} plotted series, no script error")
    endif()
  endif()
  set(problem "${problem}" PARENT_SCOPE)
endfunction()

check_page("${page}")
if(problem)
  message(FATAL_ERROR "${page}: ${problem}")
endif()
execute_process(COMMAND "${CHROMIUM}" ${flags} --screenshot=${OUT}/report.png
  --window-size=1400,2600 "file://${page}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 90)
file(SIZE "${OUT}/report.png" png_size)
if(NOT rc EQUAL 0 OR png_size LESS 10000)
  message(FATAL_ERROR "no screenshot of ${page} (chromium exit ${rc}, ${png_size} bytes)")
endif()
message(STATUS "screenshot: ${OUT}/report.png (${png_size} bytes)")

# The check must fail on a broken page.
file(READ "${page}" html)
string(REPLACE "</body>" "<script>throw new Error('planted')</script></body>" planted_error "${html}")
string(REPLACE "</body>" "<script>console.error('planted')</script></body>" planted_console "${html}")
string(REPLACE "etwhStart();" "/* not started */" not_started "${html}")
string(REPLACE ".concat(floorSeries(runs))" "" no_floor "${html}")
foreach(kind planted_error planted_console not_started no_floor)
  if("${${kind}}" STREQUAL "${html}")
    message(FATAL_ERROR "could not make the ${kind} copy of the page")
  endif()
  file(WRITE "${OUT}/${kind}.html" "${${kind}}")
  check_page("${OUT}/${kind}.html")
  if(NOT problem)
    message(FATAL_ERROR "the check passed ${OUT}/${kind}.html: it cannot fail")
  endif()
  message(STATUS "${kind}: refused as it must be (${problem})")
endforeach()
