// `blis run`: flags, resolution of the configuration, and the report.
#include "app/commands.hpp"
#include "app/run_options.hpp"

#include <blis/errors.hpp>

namespace blis::app {

std::unique_ptr<RunOptions> make_run_options() { return std::make_unique<RunOptions>(); }

void add_run_flags(CLI::App& run, RunOptions& o) {
  run.add_option("--model", o.model, "Model name, e.g. qwen/qwen3-14b");
}

int run_simulation(RunOptions& o, const std::vector<std::string>&) {
  if (o.model.empty()) throw InputError("--model", "no model given; e.g. --model qwen/qwen3-14b");
  throw InputError("run", "the engine is not built yet");
}

}  // namespace blis::app
