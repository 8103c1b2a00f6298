#include "run/farm.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace blis {
namespace {

class ThreadFarm final : public Farm {
 public:
  FarmFailure run(const std::vector<RunConfig>& configs, int64_t jobs, const FarmDone& done) override {
    std::vector<std::exception_ptr> errors(configs.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    auto work = [&] {
      for (size_t i = next++; i < configs.size() && !failed; i = next++) {
        const auto start = std::chrono::steady_clock::now();
        RunOutcome outcome;
        try {
          outcome = simulate(configs[i]);
        } catch (...) {
          errors[i] = std::current_exception();
          failed = true;
          continue;
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard<std::mutex> lock(mutex);
        done(i, outcome, secs);
      }
    };
    const size_t threads = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(1, jobs)), configs.size());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < errors.size(); ++i)
      if (errors[i]) return std::make_pair(i, errors[i]);
    return std::nullopt;
  }
};

std::unique_ptr<Farm>& farm_slot() {
  static std::unique_ptr<Farm> farm = std::make_unique<ThreadFarm>();
  return farm;
}

}  // namespace

Farm& simulation_farm() { return *farm_slot(); }
void set_simulation_farm(std::unique_ptr<Farm> farm) { farm_slot() = std::move(farm); }

}  // namespace blis
