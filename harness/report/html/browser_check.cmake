# Opens the page of make_outputs.cmake in headless Chromium: a screenshot, then the DOM after the
# page's script ran, which must show the script finished (data-rendered="done"), recorded no
# error (data-errors="": the page records uncaught errors and console.error there) and drew at
# least MIN_SERIES plotted series, one of them named starting with REQUIRED_SERIES. Then the check
# must refuse four broken copies of the page (a planted script error, a planted console error,
# the charts' script never started, the wake-up floors left out of the latency CDFs): it can fail.
# Then the page as people read it, measured in Chromium by CHECKS (page_checks.js, appended to a
# copy): failed rows first, no two series or legend entries of a chart alike (colour and line
# pattern), no two tick labels overlapping, and as many timeline marks as the --trace files have
# events (counted here, from the files); each of these must fail on a page broken for it.
#   cmake -DCHROMIUM=<exe or empty> -DOUT=<dir of make_outputs> -DMIN_SERIES=N
#     -DREQUIRED_SERIES=<name> -DCHECKS=<page_checks.js> -P browser_check.cmake
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

# ---- The page for people: measured in Chromium by page_checks.js ----------------------------
# The events of the --trace inputs (every one but the metadata "M"), counted from the files.
set(trace_events 0)
foreach(trace run.trace.json stress.trace.json)
  file(READ "${OUT}/${trace}" text)
  string(REGEX MATCHALL "\"ph\": *\"[^\"]*\"" phases "${text}")
  foreach(ph IN LISTS phases)
    if(NOT ph MATCHES "\"M\"$")
      math(EXPR trace_events "${trace_events} + 1")
    endif()
  endforeach()
endforeach()
file(READ "${CHECKS}" checks)

# Sets `measured` in the caller to page_checks.js's findings on `html` and `problem` to what is
# wrong with them, or "".
function(measure_page name html)
  string(REPLACE "</body>" "<script>\n${checks}\n</script></body>" checked "${html}")
  file(WRITE "${OUT}/${name}.html" "${checked}")
  execute_process(COMMAND "${CHROMIUM}" ${flags} --window-size=1400,2600 --dump-dom
    "file://${OUT}/${name}.html" RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE log TIMEOUT 90)
  set(problem "")
  if(NOT rc EQUAL 0 OR NOT dom MATCHES "data-check=\"([^\"]*)\"")
    set(problem "the checks did not run (chromium exit ${rc}): ${log}")
  else()
    set(measured "${CMAKE_MATCH_1}")
    string(REGEX MATCH "misplaced=([0-9]+);bad_rows=([0-9]+);dup_styles=([0-9]+);dup_legend=([0-9]+);overlaps=([0-9]+);ticks=([0-9]+);marks=([0-9]+)" _ "${measured}")
    if(NOT CMAKE_MATCH_1 EQUAL 0 OR CMAKE_MATCH_2 EQUAL 0)
      set(problem "failed rows not first (${measured})")
    elseif(NOT CMAKE_MATCH_3 EQUAL 0 OR NOT CMAKE_MATCH_4 EQUAL 0)
      set(problem "series or legend entries alike (${measured})")
    elseif(NOT CMAKE_MATCH_5 EQUAL 0 OR CMAKE_MATCH_6 LESS 50)
      set(problem "tick labels overlap, or too few measured (${measured})")
    elseif(NOT CMAKE_MATCH_7 EQUAL trace_events)
      set(problem "${CMAKE_MATCH_7} timeline marks for ${trace_events} events (${measured})")
    endif()
  endif()
  set(measured "${measured}" PARENT_SCOPE)
  set(problem "${problem}" PARENT_SCOPE)
endfunction()

measure_page(measured "${html}")
if(problem)
  message(FATAL_ERROR "${page}: ${problem}")
endif()
message(STATUS "measured in Chromium: ${measured} (${trace_events} trace events)")

# Each measurement must fail on a page broken for it.
string(REPLACE "matrixTable(cols, badFirst(rules, ruleIsBad), details)" "matrixTable(cols, rules, details)"
  unsorted "${html}")
string(REPLACE "if (!used[ci + \"|\" + di]) {" "if (true) {" alike "${html}")
string(REPLACE "var xTicks = thinTicks(x.ticks, x, labelWidth);" "var xTicks = x.ticks.concat(x.ticks);"
  overlapping "${html}")
string(REPLACE "t.marks.forEach(function (m) {" "t.marks.slice(1).forEach(function (m) {" unmarked "${html}")
foreach(kind unsorted alike overlapping unmarked)
  if("${${kind}}" STREQUAL "${html}")
    message(FATAL_ERROR "could not make the ${kind} copy of the page")
  endif()
  measure_page(${kind} "${${kind}}")
  if(NOT problem)
    message(FATAL_ERROR "the measurements passed the ${kind} page (${measured}): they cannot fail")
  endif()
  message(STATUS "${kind}: refused as it must be (${problem})")
endforeach()
