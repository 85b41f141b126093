# What the Windows build (MSVC or mingw-w64) adds to the etw_api target: the checks that find
# which documented ETW names the toolchain's SDK headers lack, and providers/win32_compat.h,
# force-included into our C++ sources to supply exactly those. Included by the top-level
# CMakeLists.txt when WIN32.
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)

set(etwh_sdk_prelude "#include <windows.h>\n#include <evntprov.h>\n#include <evntrace.h>\n#include <evntcons.h>\n")

cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_QUIET ON)
check_cxx_source_compiles("${etwh_sdk_prelude}int main() { return EventProviderSetTraits; }"
                          ETWH_SDK_HAS_EVENT_PROVIDER_SET_TRAITS)
check_cxx_source_compiles("${etwh_sdk_prelude}int main() { return EtwProviderTraitTypeGroup; }"
                          ETWH_SDK_HAS_ETW_PROVIDER_TRAIT_TYPE)
check_cxx_source_compiles("${etwh_sdk_prelude}int main() { return sizeof(EVENT_FILTER_EVENT_ID); }"
                          ETWH_SDK_HAS_EVENT_FILTER_EVENT_ID)
check_cxx_source_compiles("${etwh_sdk_prelude}int main() { return sizeof(EVENT_FILTER_EVENT_NAME); }"
                          ETWH_SDK_HAS_EVENT_FILTER_EVENT_NAME)
set(etwh_tdh_prelude "${etwh_sdk_prelude}#include <tdh.h>\n")
check_cxx_source_compiles("${etwh_tdh_prelude}int main() { return &TdhLoadManifest != 0; }"
                          ETWH_SDK_HAS_TDH_LOAD_MANIFEST)
check_cxx_source_compiles("${etwh_tdh_prelude}int main() { return TDH_INTYPE_MANIFEST_COUNTEDSTRING; }"
                          ETWH_SDK_HAS_TDH_IN_TYPE)
check_cxx_source_compiles("${etwh_tdh_prelude}int main() { return PropertyParamFixedCount; }"
                          ETWH_SDK_HAS_PROPERTY_PARAM_FIXED_COUNT)
cmake_pop_check_state()

foreach(name IN ITEMS EVENT_PROVIDER_SET_TRAITS ETW_PROVIDER_TRAIT_TYPE EVENT_FILTER_EVENT_ID
                      EVENT_FILTER_EVENT_NAME TDH_LOAD_MANIFEST TDH_IN_TYPE
                      PROPERTY_PARAM_FIXED_COUNT)
  if(NOT ETWH_SDK_HAS_${name})
    message(STATUS "etwh: the SDK headers lack ${name}; providers/win32_compat.h supplies it")
    target_compile_definitions(etw_api INTERFACE ETWH_LACKS_${name})
  endif()
endforeach()

# _WIN32_WINNT: Windows 10, where every API of the catalog exists; NOMINMAX: our code uses
# std::min / std::max.
target_compile_definitions(etw_api INTERFACE _WIN32_WINNT=0x0A00 NOMINMAX)

set(etwh_win32_compat "${PROJECT_SOURCE_DIR}/providers/win32_compat.h")
if(MSVC)
  target_compile_options(etw_api INTERFACE "$<$<COMPILE_LANGUAGE:CXX>:/FI${etwh_win32_compat}>")
else()
  target_compile_options(etw_api INTERFACE
                         "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include ${etwh_win32_compat}>")
endif()
