// Where the simulations of a sweep, a search or a plan run: threads of this
// process by default, or — in an MPI build started by mpirun — the worker
// ranks (core/src/run/mpi_farm.cpp). Either way results come back in the
// order asked, so the report is the same whatever runs them.
#pragma once

#include "run/simulate.hpp"

#include <blis/run_config.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace blis {

// Called as each simulation finishes, one call at a time: its index in the
// batch, its outcome and its wall seconds.
using FarmDone = std::function<void(size_t index, RunOutcome& outcome, double seconds)>;

// The first failure of a batch: its index and what it threw.
using FarmFailure = std::optional<std::pair<size_t, std::exception_ptr>>;

class Farm {
 public:
  virtual ~Farm() = default;
  // Simulates every configuration (up to `jobs` at once where that means
  // something); stops starting new ones after a failure, lets those in
  // flight finish, and returns the failure with the lowest index.
  virtual FarmFailure run(const std::vector<RunConfig>& configs, int64_t jobs, const FarmDone& done) = 0;
};

// The farm in use (threads unless an MPI farm was installed).
Farm& simulation_farm();
void set_simulation_farm(std::unique_ptr<Farm> farm);

}  // namespace blis
