# Writes OUTPUT, a C++ header holding each of ASSETS (the page's html, css and js) as a raw
# string literal named kAsset_<file name with '.' as '_'>. Run by the build whenever an asset
# changes: `cmake -DOUTPUT=... -DASSETS="a|b" -P embed_assets.cmake`.
string(REPLACE "|" ";" ASSETS "${ASSETS}")
set(delimiter "etwh_asset")
set(text "// Generated from harness/report/html/assets/ by embed_assets.cmake: edit the assets.\n")
string(APPEND text "#pragma once\n\n#include <string_view>\n\nnamespace etwh::report_html::assets {\n")
foreach(asset IN LISTS ASSETS)
  file(READ "${asset}" content)
  if(content MATCHES "\\)${delimiter}\"")
    message(FATAL_ERROR "${asset}: contains )${delimiter}\", the end of the raw string literal")
  endif()
  get_filename_component(name "${asset}" NAME)
  string(REPLACE "." "_" name "${name}")
  string(APPEND text "\ninline constexpr std::string_view kAsset_${name} = R\"${delimiter}(${content})${delimiter}\";\n")
endforeach()
string(APPEND text "\n}  // namespace etwh::report_html::assets\n")
file(WRITE "${OUTPUT}.tmp" "${text}")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
