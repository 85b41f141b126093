#include "access_mode.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace etwrt {

bool control_denied() {
  const char* value = std::getenv("ETWRT_DENY_CONTROL");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") != 0) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      std::fprintf(stderr,
                   "etwrt: ETWRT_DENY_CONTROL: expected 0 or 1, got '%s'; treating it as 1 "
                   "(no right to control sessions)\n",
                   value);
    }
  }
  return true;
}

bool needs_control_right(const nlohmann::json& request) {
  const auto op = request.find("op");
  if (op == request.end() || !op->is_string()) return false;
  const std::string& name = op->get_ref<const std::string&>();
  return name == "start" || name == "control" || name == "enable" || name == "disallow" ||
         name == "open";
}

}  // namespace etwrt
