// The `blis` command line. Results go to stdout; logs, warnings and progress
// to stderr. Errors print "blis: error: ..." and exit 2 (usage, configuration,
// plugins, scripts) or 1 (failures while simulating).
#include "app/commands.hpp"

#include <blis/errors.hpp>
#ifdef BLIS_WITH_MPI
#include <blis/mpi.hpp>
#endif

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <iostream>

namespace {

int run_command(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("blis");
  logger->set_pattern("%^%l%$: %v");
  logger->set_level(spdlog::level::warn);
  spdlog::set_default_logger(logger);

  CLI::App app{"blis — a discrete-event simulator of LLM inference serving clusters"};
  app.name("blis");
  app.set_version_flag("--version", blis::app::version_text(), "Print version, plugin ABI and LuaJIT version");
  app.require_subcommand(0, 1);
  blis::app::Commands commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    commands.describe_values();
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "blis: error: " << blis::app::explain_parse_error(app, e, argc, argv) << "\n";
    return 2;
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 0;
  }
  try {
    return commands.execute();
  } catch (const blis::Error& e) {
    std::fflush(stdout);
    std::cerr << "blis: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "blis: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
#ifdef BLIS_WITH_MPI
  // Under mpirun, rank 0 runs the command and the other ranks simulate what
  // it hands out (docs/distributed.md).
  const int rank = blis::mpi_start(&argc, &argv);
  if (rank != 0) {
    auto logger = spdlog::stderr_color_mt("blis");
    logger->set_pattern("%^%l%$: %v");
    logger->set_level(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    blis::mpi_worker();
    blis::mpi_finish(rank);
    return 0;
  }
  const int status = run_command(argc, argv);
  blis::mpi_finish(0);
  return status;
#else
  return run_command(argc, argv);
#endif
}
