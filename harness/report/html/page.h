// The self-contained HTML page of `etwh report`: the page's html, css and js (assets/, embedded
// at build time) with the view's data inlined as JSON; nothing is fetched from the network.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace etwh::report_html {

// JSON that can sit inside <script type="application/json">: every '<' escaped as \u003c, so
// no "</script>" or "<!--" in a string ends or changes the element.
std::string json_for_script(const nlohmann::json& data);

// The whole page for `view` (build_view's output).
std::string render_page(const nlohmann::json& view);

}  // namespace etwh::report_html
