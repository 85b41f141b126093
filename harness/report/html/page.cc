#include "harness/report/html/page.h"

#include "report_assets.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace etwh::report_html {
namespace {

// Replaces the one `marker` of `page` by `value` (the value is not searched again).
void fill(std::string& page, std::string_view marker, std::string_view value) {
  const std::size_t at = page.find(marker);
  if (at == std::string::npos) {
    throw std::logic_error("page.html has no " + std::string(marker));
  }
  page.replace(at, marker.size(), value);
}

}  // namespace

std::string json_for_script(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_page(const nlohmann::json& view) {
  // Filled in this order: the css and js are ours, the data last (so nothing in it is a marker).
  std::string page(assets::kAsset_page_html);
  fill(page, "/*@ETWH_CSS@*/", assets::kAsset_page_css);
  fill(page, "/*@ETWH_JS@*/", assets::kAsset_page_js);
  fill(page, "/*@ETWH_SECTIONS_JS@*/", assets::kAsset_sections_js);
  fill(page, "@ETWH_DATA@", json_for_script(view));
  return page;
}

}  // namespace etwh::report_html
