// `etwh stress` on the command line; the command itself is harness/stress/stress_command.h.
#include "harness/commands/command.h"

#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "harness/commands/threshold_options.h"
#include "harness/report/stress_formats.h"
#include "harness/stress/profile.h"
#include "harness/stress/stress_command.h"

namespace etwh::cli {
namespace {

class StressCommand : public Command {
 public:
  StressCommand() : Command("stress", "Run stress profiles (scenarios/stress/)") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_option("profiles", args_.profiles,
                   "Stress profiles: files, folders of them, or shipped names (fast_steady)")
        ->required();
    add_format_options(cmd, stress::stress_formats(), args_.format_files);
    cmd.add_option("--sweep", args_.sweep, "Run each profile once per value: DIMENSION=V1,V2,...");
    cmd.add_option("--writer", writer_, "The etwh-stress-writer executable");
    cmd.add_option("--repetitions", args_.repetitions,
                   "Run each profile N times and keep every run (default 1)")
        ->check(CLI::Range(1u, 1000u));
    cmd.add_option("--series-ms", args_.series_ms, "Time series step in ms (default 100)")
        ->check(CLI::Range(std::uint64_t{10}, std::uint64_t{60000}));
    cmd.add_option("--baseline", args_.baseline,
                   "Compare with this results file (etwh compare BASELINE <this run>)");
    add_threshold_options(cmd, args_.thresholds, "With --baseline");
    cmd.add_option("--trace", args_.trace_file,
                   "Write a timeline (Trace Event Format, for Perfetto) to FILE");
  }

  int execute(const Context& context) override {
    // Names and folders become files before anything runs; a bad one is an InputError (exit 2).
    std::vector<std::string> files;
    for (const auto& file :
         stress::resolve_profiles(args_.profiles, context.data / "scenarios" / "stress")) {
      files.push_back(file.string());
    }
    args_.profiles = std::move(files);
    catch_stop_signals();
    PrivateEtwrtHome home;
    args_.writer = writer_.empty() ? context.exe_dir / executable_name("etwh-stress-writer")
                                   : std::filesystem::path(writer_);
    args_.platform = build_platform();
    args_.version = ETWH_VERSION;
    args_.command_line = context.command_line;
    args_.host = host_name();
    args_.start_time = utc_now();
    const int code = stress::run_stress_command(args_);
    // A stop that came after the last profile's last check still ends as a stop (130/143).
    return stop_requested() ? stop_exit_code() : code;
  }

 private:
  stress::StressArgs args_;
  std::string writer_;
};

}  // namespace

std::unique_ptr<Command> make_stress_command() { return std::make_unique<StressCommand>(); }

}  // namespace etwh::cli
