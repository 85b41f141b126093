// `etwh report FILE... -o report.html`: one self-contained HTML page from run, stress and
// compare JSON outputs; the page itself is harness/report/html/.
#include "harness/commands/command.h"

#include "harness/report/html/inputs.h"
#include "harness/report/html/page.h"
#include "harness/report/html/view.h"
#include "etwh/output_file.h"

#include <iostream>

namespace etwh::cli {
namespace {

class ReportCommand : public Command {
 public:
  ReportCommand()
      : Command(
            "report",
            "One self-contained HTML page (conformance matrix, stress charts, comparisons) from "
            "etwh run, stress and compare JSON outputs") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_option("files", files_, "JSON outputs of etwh run, stress or compare (any order)")
        ->required();
    cmd.add_option("-o,--output", output_, "The HTML page to write")->required();
    cmd.add_option("--title", title_, "The page's title (default: etwh report)");
  }

  int execute(const Context&) override {
    const OutputFile page(output_);  // checked before anything is read (output_file.h)
    std::vector<report_html::Input> inputs;
    for (const std::string& f : files_) inputs.push_back(report_html::load_input(f));
    nlohmann::json view = report_html::build_view(inputs, "etwh " ETWH_VERSION);
    view["title"] = title_;
    page.write(report_html::render_page(view));
    std::cout << "wrote " << output_ << " from " << inputs.size() << " file"
              << (inputs.size() == 1 ? "" : "s") << "\n";
    return kExitOk;
  }

 private:
  std::vector<std::string> files_;
  std::string output_;
  std::string title_ = "etwh report";
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace etwh::cli
