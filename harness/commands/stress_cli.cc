// `etwh stress` on the command line; the command itself is harness/stress/stress_command.h.
#include "command.h"

#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "stress_command.h"

namespace etwh::cli {
namespace {

class StressCommand : public Command {
 public:
  CLI::App* define(CLI::App& app, const Context&) override {
    CLI::App* cmd = app.add_subcommand("stress", "Run stress profiles (scenarios/stress/)");
    cmd->add_option("profiles", args_.profiles, "Stress profile files")->required();
    cmd->add_option("--json", args_.json_file, "Write the JSON results to FILE");
    cmd->add_option("--sweep", args_.sweep, "Run each profile once per value: DIMENSION=V1,V2,...");
    cmd->add_option("--writer", writer_, "The etwh-stress-writer executable");
    return cmd;
  }

  int execute(const Context& context) override {
    catch_stop_signals();
    PrivateEtwrtHome home;
    args_.writer = writer_.empty() ? context.exe_dir / executable_name("etwh-stress-writer")
                                   : std::filesystem::path(writer_);
    args_.platform = build_platform();
    args_.version = ETWH_VERSION;
    args_.command_line = context.command_line;
    args_.host = host_name();
    args_.start_time = utc_now();
    return stress::run_stress_command(args_);
  }

 private:
  stress::StressArgs args_;
  std::string writer_;
};

}  // namespace

std::unique_ptr<Command> make_stress_command() { return std::make_unique<StressCommand>(); }

}  // namespace etwh::cli
