// "Did you mean": the known names nearest to a mistyped command, option or rule ID, by edit
// distance, as git and clang suggest. A name is offered when it is at most max(1, length / 3)
// edits away (letters compared without case; swapping two neighbours is one edit).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh::cli {

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, case ignored.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates nearest to `typed` within the rule above, best first (ties kept, in order).
std::vector<std::string> closest(const std::string& typed,
                                 const std::vector<std::string>& candidates);

// "; did you mean 'run'?" or "; did you mean one of 'a', 'b'?", empty with no candidate near.
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& candidates);

// After a parse error: what in argv was not understood, with the nearest command or option,
// "etwh: unknown command 'runn'; did you mean 'run'?"; nullopt when argv holds no unknown
// command nor option (the error is of another kind: a missing value, a bad number).
std::optional<std::string> unknown_word_hint(const CLI::App& app, int argc, char** argv);

}  // namespace etwh::cli
