#include "etwh/testing/provider_check.h"

#include <algorithm>

namespace etwh::testing {

std::vector<std::string> ProviderReport::failed_rules() const {
  std::vector<std::string> rules;
  for (const ProviderFinding& f : failures) rules.push_back(f.rule);
  std::sort(rules.begin(), rules.end());
  rules.erase(std::unique(rules.begin(), rules.end()), rules.end());
  return rules;
}

std::string ProviderReport::text() const {
  std::string out;
  for (const std::string& p : providers) out += "provider " + p + " judged\n";
  for (const ProviderFinding& f : failures) {
    out += "FAIL " + f.rule + " (" + f.provider +
           (f.step.empty() ? "" : ", step \"" + f.step + "\"") + "): " + f.text + "\n";
  }
  for (const ProviderFinding& f : not_judged) {
    out += "NOT JUDGED " + f.rule + " (" + f.provider + "): " + f.observed + ": " + f.text + "\n";
  }
  for (const std::string& e : errors) out += "ERROR " + e + "\n";
  return out;
}

}  // namespace etwh::testing
