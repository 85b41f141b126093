# Runs in script mode (cmake -P) from the etwrt_install_package test: installs etwrt, builds
# sample/ against it and runs each sample program. Inputs: BUILD_DIR,
# SAMPLE_DIR, WORK_DIR, GENERATOR, CXX_COMPILER. Every step must succeed.
foreach(var BUILD_DIR SAMPLE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(sample_build "${WORK_DIR}/sample-build")
set(home "${WORK_DIR}/home")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(
  COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component etwrt
  COMMAND_ERROR_IS_FATAL ANY)

execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${SAMPLE_DIR}" -B "${sample_build}" -G "${GENERATOR}"
          "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}"
          -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build "${sample_build}" COMMAND_ERROR_IS_FATAL ANY)

# A fresh ETWRT_HOME, and no ETWRT_BROKER: the installed library must find the installed
# broker by itself. A short idle time lets that broker exit soon after each sample, and the
# sample owns it (ETWRT_BROKER_OWNER_PID, the shell's pid that exec keeps): a sample that crashes
# or is killed leaves no broker behind.
foreach(sample etwrt_sample etwrt_sample_consumers etwrt_sample_mc_shaped
               etwrt_sample_tracelogging_shaped)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=ETWRT_BROKER "ETWRT_HOME=${home}"
            ETWRT_BROKER_IDLE_MS=200
            sh -c "ETWRT_BROKER_OWNER_PID=$$ exec \"$0\"" "${sample_build}/${sample}"
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${sample} failed (${result})")
  endif()
endforeach()
