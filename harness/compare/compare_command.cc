#include "harness/compare/compare_command.h"

#include "etwh/output_file.h"
#include "harness/report/compare_report.h"

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
  const std::span<const FileFormat<Comparison>> formats = compare_formats();
  std::vector<std::optional<OutputFile>> outputs;
  try {  // The outputs are checked before the inputs are read (output_file.h).
    outputs = output_files(args.format_files);
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
  for (std::size_t i = 0; i < outputs.size() && i < formats.size(); ++i) {
    if (!write_output(outputs[i], formats[i].text(c))) return kExitBadInput;
  }
  return c.regressions > 0 ? kExitRegression : kExitOk;
}

}  // namespace etwh::compare
