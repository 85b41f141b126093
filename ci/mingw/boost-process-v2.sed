# Fixes to Boost 1.81's Process v2 headers for mingw-w64, applied by ci/mingw/deps to copies
# (never to /usr/include). One fix per line: "<header under /usr/include> <sed command>".
# ci/mingw/deps stops when a fix no longer changes its file (i.e. Boost changed).

# utf8.ipp includes <Windows.h>; mingw-w64's header is windows.h, and Linux file systems
# are case-sensitive.
boost/process/v2/detail/impl/utf8.ipp s|#include <Windows.h>|#include <windows.h>|
# utf8.ipp uses std::numeric_limits without including <limits>; it compiles only when
# something else happened to include it first.
boost/process/v2/detail/impl/utf8.ipp s|#include <boost/process/v2/error.hpp>|&\n#include <limits>|
# process_environment's initializer_list constructors pass a string literal as build_env's
# second parameter, which is an enable_if pointer that must keep its default: no overload
# matches and the Windows branch of environment.hpp does not compile.
boost/process/v2/environment.hpp s|build_env(sv,  "")|build_env(sv)|
boost/process/v2/environment.hpp s|build_env(sv, L"")|build_env(sv)|
