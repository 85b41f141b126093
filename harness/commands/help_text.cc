#include "harness/commands/help_text.h"
#include "harness/report/compare_report.h"
#include "harness/report/formats.h"
#include "harness/report/stress_formats.h"

#include <map>
#include <string>

namespace etwh::cli {
namespace {

// The value an option takes, by its name (the long name without "--", or the positional's).
// Where one name means different things in different commands, the command decides.
std::string metavar(const std::string& command, const std::string& option) {
  static const std::map<std::string, std::string> kByName = {
      {"catalog", "FILE"},
      {"json", "FILE"},
      {"junit", "FILE"},
      {"markdown", "FILE"},
      {"trace", "FILE"},
      {"expectations", "FILE"},
      {"agent", "FILE"},
      {"subject", "FILE"},
      {"writer", "FILE"},
      {"baseline", "FILE"},
      {"from", "FILE"},
      {"file", "FILE"},
      {"schedule", "FILE"},
      {"output", "FILE"},
      {"mutants", "FILE"},
      {"old", "FILE"},
      {"new", "FILE"},
      {"files", "FILE"},
      {"scenarios", "DIR"},
      {"keep", "DIR"},
      {"mutant-dir", "DIR"},
      {"paths", "PATH"},
      {"profiles", "PROFILE"},
      {"platform", "NAME"},
      {"filter", "REGEX"},
      {"rule", "ID"},
      {"jobs", "N"},
      {"repeat", "N"},
      {"repetitions", "N"},
      {"seed", "S"},
      {"alpha", "P"},
      {"min-effect", "PCT"},
      {"series-ms", "MS"},
      {"timeout", "SECONDS"},
      {"run-timeout", "SECONDS"},
      {"color", "WHEN"},
      {"title", "TITLE"},
      {"sweep", "DIM=V1,V2,..."},
      {"command", "PROGRAM"},
      {"manifest", "FILE"},
      {"provider", "GUID|NAME"},
  };
  if (option == "only") return command == "selftest" ? "NAME" : "REGEX";
  // Every format of the registry (report/) writes a FILE, in whichever command offers it.
  for (const ReportFormat& format : report_formats()) {
    if (option == format.option) return "FILE";
  }
  for (const auto& format : compare::compare_formats()) {
    if (option == format.option) return "FILE";
  }
  for (const auto& format : stress::stress_formats()) {
    if (option == format.option) return "FILE";
  }
  auto it = kByName.find(option);
  return it == kByName.end() ? "" : it->second;
}

// Each command's examples, as typed with an installed etwh (./build/bin/etwh from a clone), each
// line "$ etwh ..." as help2man sets examples in constant width.
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> kExamples = {
      {"list", "  $ etwh list\n  $ etwh list --json > rules.json"},
      {"run",
       "  $ etwh run                   # every shipped scenario\n"
       "  $ etwh run scenarios/conformance/sourceid.json --json run.json --junit run.xml\n"
       "  $ etwh run -j 2 -q --rule CB-LEVEL-MAX --filter '^cb-'\n"
       "  $ etwh run --markdown summary.md && cat summary.md >> \"$GITHUB_STEP_SUMMARY\"\n"
       "  $ etwh run --subject ./my-provider-agent scenarios/conformance/provider.json"},
      {"compare",
       "  $ etwh compare old.json new.json --markdown compare.md\n"
       "  $ etwh compare baseline.json new.json --only 'writer CPU/event'\n"
       "  $ etwh compare before.json after.json   # two Google Benchmark --benchmark_out files"},
      {"report", "  $ etwh report run.json stress.json -o report.html"},
      {"expectations", "  $ etwh expectations update --platform wine --from run.json"},
      {"update", "  $ etwh expectations update --platform wine --from run.json"},
      {"stress",
       "  $ etwh stress fast_steady\n"
       "  $ etwh stress scenarios/stress/write_path.json --repetitions 10 --json new.json \\\n"
       "      --baseline old.json --only 'writer CPU/event' --markdown stress.md"},
      {"selftest",
       "  $ etwh selftest -j 2\n  $ etwh selftest --only level-min --keep /tmp/selftest"},
      {"observe", "  $ etwh observe -- ./build/bin/etwh-observe-example 2000"},
      {"judge",
       "  $ etwh judge trace.etl                 # every provider in a trace recorded anywhere\n"
       "  $ etwh judge a.etl b.etl --provider My.Provider --json judge.json --junit judge.xml\n"
       "  $ etwh judge app.etl --manifest app.man -v && etwh report judge.json -o judge.html"},
  };
  return kExamples;
}

// A range check describes itself with CLI11's type ("INT in [1 - 64]"): the metavar says what
// the value is, the range is enough after it ("N:[1 - 64]").
void drop_type_from_checks(CLI::Option& o) {
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = o.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return;
    }
    const std::string text = v->get_description();
    for (const char* type : {"INT in ", "UINT in ", "FLOAT in ", "NUMBER in "}) {
      if (text.rfind(type, 0) == 0) v->description(text.substr(std::string(type).size()));
    }
  }
}

void name_values(CLI::App& app, const std::string& command) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_expected_min() == 0) continue;  // a flag
    const std::string name = o->get_lnames().empty() ? o->get_name() : o->get_lnames().front();
    const std::string value = metavar(command, name);
    if (!value.empty()) o->type_name(value);
    drop_type_from_checks(*o);
  }
}

void describe(CLI::App& app, const std::string& command) {
  name_values(app, command);
  auto it = examples().find(command);
  if (it != examples().end()) {
    const std::string rest = app.get_footer();
    app.footer((rest.empty() ? "" : rest + "\n\n") + "Examples:\n" + it->second);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    describe(*sub, sub->get_name());
  }
}

}  // namespace

void describe_for_people(CLI::App& app) {
  name_values(app, "");
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    describe(*sub, sub->get_name());
  }
  // Last: help2man makes the lines after "Examples:" the man page's EXAMPLES section, each
  // "$ " line in constant width.
  app.footer(app.get_footer() +
             "\n\nExamples:\n"
             "  $ etwh run -j 2 --json run.json --junit run.xml --markdown run.md\n"
             "  $ etwh stress fast_steady --json stress.json\n"
             "  $ etwh compare old.json new.json --markdown compare.md\n"
             "  $ etwh report run.json stress.json -o report.html");
}

}  // namespace etwh::cli
