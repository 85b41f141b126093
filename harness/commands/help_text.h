// What `etwh COMMAND --help` (and the man page, made from it) tells a person beyond each
// option's own line: the kind of value an option takes (FILE, DIR, N, REGEX... instead of
// CLI11's TEXT or UINT) and an EXAMPLES section per command. One table for every command, so
// that the commands' files keep to their options.
#pragma once

#include <CLI/CLI.hpp>

namespace etwh::cli {

// Names the values of every option of `app` and of its commands, and adds each command's
// examples in front of its footer. Call once every command is defined.
void describe_for_people(CLI::App& app);

}  // namespace etwh::cli
