#include "harness/report/console_style.h"

namespace etwh {

namespace {

constexpr std::string_view kReset = "\x1b[0m";

std::string wrapped(std::string_view code, std::string_view text) {
  std::string out(code);
  out += text;
  out += kReset;
  return out;
}

}  // namespace

std::string ConsoleStyle::status(Status s, bool as_expected, std::string_view text) const {
  if (!color_) return std::string(text);
  if (!as_expected) return wrapped("\x1b[31m", text);                  // red
  return wrapped(s == Status::kPass ? "\x1b[32m" : "\x1b[33m", text);  // green, yellow
}

std::string ConsoleStyle::bold(std::string_view text) const {
  return color_ ? wrapped("\x1b[1m", text) : std::string(text);
}

std::string ConsoleStyle::severity(Severity s, std::string_view text) const {
  if (!color_) return std::string(text);
  switch (s) {
    case Severity::kFailure: return wrapped("\x1b[1;31m", text);
    case Severity::kWarning: return wrapped("\x1b[1;35m", text);
    case Severity::kNote: return wrapped("\x1b[1;36m", text);
  }
  return std::string(text);
}

}  // namespace etwh
