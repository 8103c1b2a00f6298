// The lifecycle signals' fan-out (engine/lifecycle.hpp): every subscriber
// hears a signal, in list order, and one that does not handle it is skipped.
#include "catch.hpp"

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <string>
#include <vector>

using namespace blis;

namespace {

struct Counts : LifecycleSubscriber {
  std::vector<std::string>& log;
  explicit Counts(std::vector<std::string>& l) : log(l) {}
  void on_queued(Request& r, SimTime t) {
    log.push_back("counts queued " + std::to_string(r.spec.id) + "@" + std::to_string(t));
  }
  void on_completed(Request& r, SimTime) {
    r.timing.set().e2e = 42;
    log.push_back("counts completed");
  }
};

// Reads what the subscriber before it wrote in the request's slot.
struct Reader : LifecycleSubscriber {
  std::vector<std::string>& log;
  explicit Reader(std::vector<std::string>& l) : log(l) {}
  void on_completed(Request& r, SimTime) { log.push_back("reader sees e2e " + std::to_string(r.timing.e2e())); }
};

}  // namespace

TEST_CASE("lifecycle signals reach every subscriber in list order", "[engine]") {
  std::vector<std::string> log;
  Counts counts(log);
  Reader reader(log);
  Lifecycle<Counts, Reader> signals(counts, reader);
  Request r;
  r.spec.id = 7;
  signals.queued(r, 100);
  signals.preempted(r, 150);  // nobody listens
  signals.completed(r, 200);
  CHECK(log == std::vector<std::string>{"counts queued 7@100", "counts completed", "reader sees e2e 42"});
}
