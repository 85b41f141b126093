# nlohmann/json for the mingw-w64 cross-build: Debian's header-only library, reached through
# ETWH_MINGW_DEPS/include (see ci/mingw/toolchain.cmake). Headers only, nothing to link.
if(NOT TARGET nlohmann_json::nlohmann_json)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
endif()
