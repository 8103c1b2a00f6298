// The simulation side of `blis serve`: one thread that owns the cluster
// simulation (run/live.hpp) and keeps its clock in step with the wall clock
// (times the time scale). Requests come in through a mutex-guarded inbox,
// arrive at the simulated time of their submission, and each token reaches
// its receiver when the simulated time of the step that produced it comes.
// The kernel stays single-threaded: only this thread touches it.
#pragma once

#include "cluster/live_tap.hpp"
#include "run/live.hpp"

#include <blis/workload.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace blis::live {

// Where a request's progress goes (the HTTP side). Called from the
// simulation thread, once per change, in order: `tokens` delivered so far,
// and how the request ended once it did (then no more calls).
class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual void update(int32_t tokens, std::optional<LiveEnd> end) = 0;
};

// vLLM's histogram of a latency, in seconds.
struct Histogram {
  std::vector<double> bounds;
  std::vector<int64_t> counts;  // per bound, not cumulative; one more for +Inf
  double sum = 0;
  int64_t count = 0;
  explicit Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size() + 1, 0) {}
  void observe(double x);
};

class Driver final : public LiveSink {
 public:
  // time_scale > 0: simulated seconds per wall second.
  explicit Driver(double time_scale) : scale_(time_scale) {}
  ~Driver() override;
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // The simulation it drives (made with this driver as its LiveSink), which
  // outlives it.
  void attach(ClusterSimulation& sim, int32_t block_size) {
    sim_ = &sim;
    block_size_ = block_size;
  }
  // Starts the simulation thread; the simulated clock starts at 0 now.
  void start();
  // Ends it (requests still open get nothing more).
  void stop();

  // Thread-safe. The request (its lengths and content in `spec`) arrives
  // now; returns its id (spec.id).
  uint64_t submit(WorkloadRequest spec, std::shared_ptr<Receiver> receiver);
  // Its client left: the request leaves the simulation (as a timeout).
  void cancel(uint64_t id);
  // Every open request leaves (shutdown).
  void cancel_all();
  int64_t open_requests() const { return open_.load(); }
  // The Prometheus text of /metrics, with vLLM's names.
  std::string metrics_text(const std::string& model) const;

  // LiveSink: the simulation thread only.
  void token(const Request& r, SimTime end) override;
  void finished(const Request& r, SimTime t, LiveEnd how) override;
  void preempted(const Request& r) override;

 private:
  struct Command {
    enum Kind { Submit, Cancel, CancelAll } kind = Submit;
    uint64_t id = 0;
    WorkloadRequest spec;
    std::shared_ptr<Receiver> receiver;
  };
  struct Open {
    std::shared_ptr<Receiver> receiver;
    uint64_t handle = 0;
    SimTime arrival = 0, last_token = -1;
    int32_t tokens = 0, prompt = 0;
  };
  // A token or an end, delivered at its simulated time.
  struct Pending {
    SimTime t = 0;
    uint64_t seq = 0, id = 0;
    std::optional<LiveEnd> end;
    bool operator>(const Pending& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  using Clock = std::chrono::steady_clock;

  void loop();
  void apply(Command& c, SimTime now);
  void deliver(SimTime now);
  void publish_loads();
  SimTime virtual_now() const;
  Clock::time_point wall_of(SimTime t) const;

  ClusterSimulation* sim_ = nullptr;
  const double scale_;
  Clock::time_point start_{};

  mutable std::mutex m_;  // guards the inbox, stop_, next_id_
  std::condition_variable cv_;
  std::vector<Command> inbox_;
  bool stop_ = false;
  uint64_t next_id_ = 0;
  std::atomic<int64_t> open_{0};
  std::thread thread_;

  // The simulation thread's own.
  std::unordered_map<uint64_t, Open> open_map_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  uint64_t seq_ = 0;

  // What /metrics shows, guarded by mm_.
  mutable std::mutex mm_;
  struct Figures {
    int64_t running = 0, waiting = 0, used_blocks = 0, total_blocks = 0, hit_blocks = 0, query_blocks = 0;
    int64_t prompt_tokens = 0, generation_tokens = 0, preemptions = 0;
    int64_t finished_length = 0, finished_abort = 0, rejected = 0;
    Histogram ttft, itl, e2e;
    double lag_max = 0, lag_sum = 0;
    int64_t lag_count = 0;
    Figures();
  } fig_;
  int32_t block_size_ = 16;
};

}  // namespace blis::live
