# CLI11 for the mingw-w64 cross-build: Debian's header-only library, reached through
# ETWH_MINGW_DEPS/include (see ci/mingw/toolchain.cmake).
if(NOT TARGET CLI11::CLI11)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
endif()
