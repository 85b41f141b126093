#include "harness/report/console_lines.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <utility>

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/ioctl.h>
#include <unistd.h>
#endif

namespace etwh {

namespace {

constexpr char kEscape = '\x1b';

// The end of the SGR sequence "ESC [ ... m" starting at `at`, or `at` when none starts there.
std::size_t skip_escape(std::string_view text, std::size_t at) {
  if (text[at] != kEscape || at + 1 >= text.size() || text[at + 1] != '[') return at;
  std::size_t end = at + 2;
  while (end < text.size() && text[end] != 'm') ++end;
  return end < text.size() ? end + 1 : end;
}

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// A compiler's words for a finding's severity: a failure is an "error", the rest keep their name.
const char* diagnostic_name(Severity s) {
  return s == Severity::kWarning || s == Severity::kNote ? severity_name(s) : "error";
}

// A text that may hold line breaks (an agent's stderr) on one console line.
std::string one_line(std::string text) {
  std::size_t at = 0;
  while ((at = text.find('\n', at)) != std::string::npos) {
    const bool last = text.find_first_not_of(" \t\r\n", at) == std::string::npos;
    text.replace(at, 1, last ? "" : " | ");
  }
  return text;
}

}  // namespace

std::size_t visible_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t after = skip_escape(text, i);
    if (after != i) {
      i = after;
      continue;
    }
    if (!continuation_byte(text[i])) ++width;
    ++i;
  }
  return width;
}

std::string fit(std::string_view line, std::size_t width) {
  if (width == 0 || visible_width(line) <= width) return std::string(line);
  std::string out;
  std::size_t shown = 0;
  bool coloured = false;
  for (std::size_t i = 0; i < line.size();) {
    const std::size_t after = skip_escape(line, i);
    if (after != i) {
      out.append(line.substr(i, after - i));
      coloured = true;
      i = after;
      continue;
    }
    if (!continuation_byte(line[i]) && ++shown == width) break;
    out += line[i++];
  }
  out += "\u2026";
  if (coloured) out += "\x1b[0m";
  return out;
}

std::size_t console_width() {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
    char* end = nullptr;
    const unsigned long n = std::strtoul(columns, &end, 10);
    if (*end == '\0' && n > 0 && n < 100000) return n;
  }
#ifdef _WIN32
  CONSOLE_SCREEN_BUFFER_INFO info;
  if (GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &info))
    return static_cast<std::size_t>(info.srWindow.Right - info.srWindow.Left + 1);
#else
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
#endif
  return 0;
}

std::string display_path(const std::string& file) {
  if (file.empty()) return file;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  const std::filesystem::path path(file);
  if (ec || !path.is_absolute()) return path.generic_string();
  const std::filesystem::path relative = path.lexically_relative(cwd);
  if (relative.empty() || *relative.begin() == "..") return path.generic_string();
  return relative.generic_string();
}

std::string finding_location(const Finding& f) {
  const std::string file = display_path(f.step.file);
  if (file.empty() || f.step.line == 0) return file;
  // No column: a position that is no line of text (a record of a trace: FILE:N).
  if (f.step.col == 0) return fmt::format("{}:{}", file, f.step.line);
  return fmt::format("{}:{}:{}", file, f.step.line, f.step.col);
}

std::string finding_line(const Finding& f, const ConsoleStyle& style) {
  const std::string where = finding_location(f);
  std::string line = where.empty() ? "" : where + ": ";
  line += style.severity(f.severity, std::string(diagnostic_name(f.severity)) + ":");
  // Appended piece by piece: "literal" + std::string&& makes mingw-w64's GCC 12 at -O3 warn
  // (-Wrestrict, a false positive).
  line += ' ';
  line += one_line(f.text);
  if (f.event) line.append(" [event ").append(describe(*f.event)).append("]");
  if (!f.rule.empty()) line.append(" [").append(f.rule).append("]");
  return line;
}

std::vector<WarningGroup> group_warnings(const std::vector<CaseResult>& results) {
  std::vector<WarningGroup> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const CaseResult& r : results) {
    for (const Finding& f : r.findings) {
      if (f.severity != Severity::kWarning) continue;
      const std::pair<std::string, std::string> key{f.rule, f.text};
      auto [it, added] = index.try_emplace(key, groups.size());
      if (added) groups.push_back({f.rule, f.text, finding_location(f), {}});
      std::vector<std::string>& cases = groups[it->second].cases;
      if (cases.empty() || cases.back() != r.id) cases.push_back(r.id);
    }
  }
  return groups;
}

}  // namespace etwh
