#include "harness/compare/compare_command.h"

#include "etwh/output_file.h"

#include <iostream>
#include <optional>

namespace etwh::compare {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitRegression = 1;
constexpr int kExitBadInput = 2;

}  // namespace

int run_compare_command(const CompareArgs& args) {
  Comparison c;
  std::optional<OutputFile> markdown_out, json_out;
  try {  // The outputs are checked before the inputs are read (output_file.h).
    markdown_out = output_file(args.markdown_file);
    json_out = output_file(args.json_file);
  } catch (const OutputRefused& e) {
    std::cerr << "etwh: " << e.what() << "\n";
    return kExitBadInput;
  }
  try {
    const Document old_doc = load_document(args.old_file);
    const Document new_doc = load_document(args.new_file);
    c = compare_documents(old_doc, new_doc, args.thresholds);
  } catch (const CompareInputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  print_console(c, std::cout);
  if (!write_output(markdown_out, markdown(c)) ||
      !write_output(json_out, to_json(c).dump(2) + "\n")) {
    return kExitBadInput;
  }
  return c.regressions > 0 ? kExitRegression : kExitOk;
}

}  // namespace etwh::compare
