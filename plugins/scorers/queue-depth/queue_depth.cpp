// queue-depth routing scorer: a load min-max normalised over the candidates,
// least loaded scores 1 (spec cluster §3.7). The load is the effective load
// (c9ca689b), or with the configuration key signal = "queue" the wait queue
// alone (the reference at HEAD, spec head §7.1).
#include <blis/plugin.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace {

// spec cluster §3.2: the SDK's definition of load, shared with the host.
using blis::sdk::effective_load;

bool queue_only(const blis::sdk::Context& ctx) {
  const std::string signal = ctx.str_or("signal", "load");
  if (signal != "load" && signal != "queue")
    throw blis::sdk::ConfigError("configuration key 'signal' must be \"load\" (queue + batch + in flight) or "
                                 "\"queue\" (the wait queue alone), got \"" + signal + "\"");
  return signal == "queue";
}

class QueueDepth {
 public:
  explicit QueueDepth(blis::sdk::Context& ctx) : queue_only_(queue_only(ctx)) {}

  void score(const blis_route_input& input, double* scores) const {
    // spec cluster §3.7: hi starts at 0 and lo at +inf, as in the reference.
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = 0;
    for (int64_t i = 0; i < input.count; ++i) {
      const int64_t load = load_of(blis::sdk::instance_at(input, i));
      if (load < lo) lo = load;
      if (load > hi) hi = load;
    }
    for (int64_t i = 0; i < input.count; ++i) {
      if (hi == lo) {
        scores[i] = 1.0;
        continue;
      }
      const int64_t load = load_of(blis::sdk::instance_at(input, i));
      scores[i] = static_cast<double>(hi - load) / static_cast<double>(hi - lo);
    }
  }

 private:
  int64_t load_of(const blis_instance_snapshot& s) const { return queue_only_ ? s.queue_depth : effective_load(s); }

  bool queue_only_;
};

}  // namespace

BLIS_PLUGINS(blis::sdk::routing_scorer<QueueDepth>(
    "queue-depth", "1.0.0",
    "Min-max normalised effective load (queue + batch + in flight); least loaded scores 1",
    BLIS_NEED_DECLARED_READS | BLIS_NEED_SNAPSHOTS))
