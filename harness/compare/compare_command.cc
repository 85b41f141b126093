#include "compare_command.h"

#include <fstream>
#include <iostream>

namespace etwh::compare {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitRegression = 1;
constexpr int kExitBadInput = 2;

bool write_file(const std::string& file, const std::string& text) {
  if (file.empty()) return true;
  if (file == "-") {  // standard output, after the table
    std::cout << "\n" << text;
    return true;
  }
  std::ofstream out(file);
  out << text;
  if (out) return true;
  std::cerr << "etwh: " << file << ": cannot write the comparison\n";
  return false;
}

}  // namespace

int run_compare_command(const CompareArgs& args) {
  Comparison c;
  try {
    const Document old_doc = load_document(args.old_file);
    const Document new_doc = load_document(args.new_file);
    c = compare_documents(old_doc, new_doc, args.thresholds);
  } catch (const CompareInputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  print_console(c, std::cout);
  if (!write_file(args.markdown_file, markdown(c)) ||
      !write_file(args.json_file, to_json(c).dump(2) + "\n")) {
    return kExitBadInput;
  }
  return c.regressions > 0 ? kExitRegression : kExitOk;
}

}  // namespace etwh::compare
