# CMake toolchain for the Windows cross-build: Debian's mingw-w64 (x86_64, posix thread model),
# against mingw's own evntprov.h / evntrace.h / evntcons.h and advapi32 / tdh.
#
# Executables are linked fully static (libgcc, libstdc++, winpthread) so that they run under
# Wine or on a bare Windows machine without any mingw DLL beside them.
#
# The libraries Debian ships only for Linux come from ci/mingw/deps, which builds them into
# ETWH_MINGW_DEPS (default build-windows/mingw-deps); find_package() finds them through the
# package files in ci/mingw/packages. ETWH_MINGW_BOOTSTRAP=ON is for building those deps
# themselves (nothing of the prefix is used yet).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(ETWH_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${ETWH_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${ETWH_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${ETWH_MINGW_TRIPLE}-windres)

# Headers and libraries come from mingw's sysroot only, never from the Linux /usr.
set(CMAKE_FIND_ROOT_PATH /usr/${ETWH_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# Lets CMake run what it builds (try_run, tests) through Wine with the build's own prefix.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine)

if(NOT ETWH_MINGW_BOOTSTRAP)
  if(NOT ETWH_MINGW_DEPS)
    get_filename_component(ETWH_MINGW_DEPS
      "${CMAKE_CURRENT_LIST_DIR}/../../build-windows/mingw-deps" ABSOLUTE)
  endif()
  set(ETWH_MINGW_DEPS "${ETWH_MINGW_DEPS}" CACHE PATH
      "Prefix where ci/mingw/deps built the mingw-w64 dependencies")
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ETWH_MINGW_DEPS)
  if(NOT EXISTS "${ETWH_MINGW_DEPS}/lib/libboost_filesystem.a")
    message(FATAL_ERROR "mingw-w64 dependencies missing in ${ETWH_MINGW_DEPS}: "
                        "run ci/mingw/deps ${ETWH_MINGW_DEPS} first (ci/windows does)")
  endif()
  # The fixed Boost headers (overlay) come before the unmodified ones; both after every
  # target's own include directories, as system headers (no warnings from them).
  set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${ETWH_MINGW_DEPS}/include")
  set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES
      "${ETWH_MINGW_DEPS}/overlay" "${ETWH_MINGW_DEPS}/include")
  # <Package>_DIR is looked at before any search path, so the sysroot rule above does not
  # hide these.
  foreach(package IN ITEMS nlohmann_json CLI11 fmt Boost)
    set(${package}_DIR "${CMAKE_CURRENT_LIST_DIR}/packages/${package}" CACHE PATH "" FORCE)
  endforeach()
  set(benchmark_DIR "${ETWH_MINGW_DEPS}/benchmark/lib/cmake/benchmark" CACHE PATH "" FORCE)
  set(pugixml_DIR "${ETWH_MINGW_DEPS}/pugixml/lib/cmake/pugixml" CACHE PATH "" FORCE)
  set(GTest_DIR "${ETWH_MINGW_DEPS}/googletest/lib/cmake/GTest" CACHE PATH "" FORCE)
endif()
