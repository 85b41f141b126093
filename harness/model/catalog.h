// The rule catalog (catalog/rules.json): every documented rule with its stable ID, our one-line
// text, the document it comes from and the kind of subject it judges; and the platforms.
#pragma once

#include "harness/model/input_error.h"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

struct Rule {
  std::string id;
  std::string text;
  std::string citation;
  std::vector<std::string> kinds;  // runtime, provider, consumer, lint (one or more)
  bool observed = false;           // the documents leave the outcome open: recorded, not judged
  // Lint rules: "warning" or "failure", how a finding counts (empty for other kinds).
  std::string severity;
  // Platform (etwrt, wine, windows) -> why no case can judge the rule there. A rule with no
  // case needs a reason for every platform (the completeness test checks it).
  std::map<std::string, std::string> unsupported;
};

struct Catalog {
  std::vector<Rule> rules;  // in file order
  // Every platform a run can judge (`platforms` in the file: name -> what answers the API
  // there): the one list of them, checked by --platform, expectations and `unsupported`.
  std::map<std::string, std::string> platforms;

  std::set<std::string> ids() const;
  const Rule* find(const std::string& id) const;
};

// Loads and validates the catalog (unique IDs, known kinds, no missing field). Throws
// InputError.
Catalog load_catalog(const std::filesystem::path& file);

// Same, from text already in memory (`file` only names it in messages).
Catalog load_catalog_text(const std::string& text, const std::string& file);

}  // namespace etwh
