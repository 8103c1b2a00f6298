#include "run/farm.hpp"

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace blis {
namespace {

// A batch's simulations, one after another, allocate alike. By default
// glibc hands a freed block of more than a few MiB back to the kernel
// (munmap, or trimming the heap's top), so that the next simulation faults
// the same memory in again, zeroed page by page: a tenth of a plan's CPU.
// Blocks up to 32 MiB (the most glibc allows) now come from the heap and its
// top stays, so the next simulation reuses them; the process keeps at most
// its peak.
void keep_freed_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
}

class ThreadFarm final : public Farm {
 public:
  FarmFailure run(const std::vector<RunConfig>& configs, int64_t jobs, const FarmDone& done) override {
    keep_freed_memory();
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
