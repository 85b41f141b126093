// etwh_schema_check SCHEMA JSON: validates a JSON document against a JSON Schema (draft 7) with
// valijson. Exit 0: valid; 1: not valid (one line per error: the JSON pointer-like context and
// the reason); 2: a file that cannot be read or parsed, or a schema valijson cannot load.
// Used by the CTests that hold etwh's real outputs to the published schemas (schemas/).
#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <fstream>
#include <iostream>
#include <optional>
#include <string>

namespace {

std::optional<nlohmann::json> read_json(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    std::cerr << file << ": cannot read\n";
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    std::cerr << file << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: etwh_schema_check SCHEMA JSON\n";
    return 2;
  }
  const auto schema_doc = read_json(argv[1]);
  const auto doc = read_json(argv[2]);
  if (!schema_doc || !doc) return 2;

  valijson::Schema schema;
  try {
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter schema_adapter(*schema_doc);
    parser.populateSchema(schema_adapter, schema);
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": not a schema valijson can load: " << e.what() << "\n";
    return 2;
  }
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(*doc);
  if (validator.validate(schema, adapter, &results)) {
    std::cout << argv[2] << ": valid against " << argv[1] << "\n";
    return 0;
  }
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const auto& part : error.context) where += part;
    std::cerr << argv[2] << ": " << where << ": " << error.description << "\n";
  }
  return 1;
}
