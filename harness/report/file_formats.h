// The registry every command chooses its output files from: per command, a table of formats,
// each an option (`--<option> FILE`), its help and the writer that makes the file's text from
// what the command found (its `Subject`). A command defines an option per row, checks each file
// asked for before it works (etwh/output_file.h) and writes it after. The tables: `etwh run` and
// `etwh observe` in formats.h (ReportFormat, whose writers are ReportWriter classes), `etwh
// compare` in compare_report.h, `etwh stress` in stress_formats.h. A new format of a command is
// its writer's file and one row in that command's table.
#pragma once

#include <string>

namespace etwh {

template <class Subject>
struct FileFormat {
  const char* option;  // the long option, without "--" ("json")
  const char* help;    // its help line; the value is a FILE ("-": standard output)
  std::string (*text)(const Subject&);
};

}  // namespace etwh
