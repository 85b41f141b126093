# Boost 1.81 for the mingw-w64 cross-build: Debian's headers (with the Process v2 fixes of
# ci/mingw/boost-process-v2.sed in ETWH_MINGW_DEPS/overlay) and a static Boost.Filesystem
# built by ci/mingw/deps. Offers the targets of Boost's own BoostConfig that etwh uses:
# Boost::headers (alias Boost::boost), and the components filesystem and system (header-only
# since 1.69). Asio needs Winsock on Windows, so Boost::headers carries it.
set(Boost_VERSION 1.81.0)
set(Boost_VERSION_STRING 1.81.0)
set(Boost_INCLUDE_DIRS "${ETWH_MINGW_DEPS}/overlay;${ETWH_MINGW_DEPS}/include")

if(NOT TARGET Boost::headers)
  add_library(Boost::headers INTERFACE IMPORTED)
  set_target_properties(Boost::headers PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "BOOST_ALL_NO_LIB"
    INTERFACE_LINK_LIBRARIES "ws2_32;mswsock")
  add_library(Boost::boost INTERFACE IMPORTED)
  set_target_properties(Boost::boost PROPERTIES INTERFACE_LINK_LIBRARIES Boost::headers)
  add_library(Boost::system INTERFACE IMPORTED)
  set_target_properties(Boost::system PROPERTIES INTERFACE_LINK_LIBRARIES Boost::headers)
  add_library(Boost::filesystem STATIC IMPORTED)
  set_target_properties(Boost::filesystem PROPERTIES
    IMPORTED_LOCATION "${ETWH_MINGW_DEPS}/lib/libboost_filesystem.a"
    INTERFACE_COMPILE_DEFINITIONS "BOOST_FILESYSTEM_STATIC_LINK=1"
    INTERFACE_LINK_LIBRARIES "Boost::headers;bcrypt")
endif()

set(Boost_LIBRARIES Boost::headers)
foreach(component IN LISTS Boost_FIND_COMPONENTS)
  if(component STREQUAL "filesystem" OR component STREQUAL "system" OR component STREQUAL "headers")
    set(Boost_${component}_FOUND TRUE)
    list(APPEND Boost_LIBRARIES Boost::${component})
  else()
    set(Boost_${component}_FOUND FALSE)
    if(Boost_FIND_REQUIRED_${component})
      set(Boost_FOUND FALSE)
      set(Boost_NOT_FOUND_MESSAGE
          "component ${component} is not built for mingw-w64 (ci/mingw/deps builds filesystem only)")
    endif()
  endif()
endforeach()
