// Closed-loop clients (spec head §4.2): when a request of a closed-loop user
// completes, its user sends the next one. This subscriber hears completions
// and hands those of closed-loop requests to the cluster, which asks the
// workload source for the follow-up and schedules its arrival. Open-loop
// requests cost one branch; users whose request was rejected, dropped or
// timed out stop, so only completions are passed on.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

namespace blis {

// The cluster side: schedules a closed-loop user's next request.
class FollowUps {
 public:
  virtual void completed(const Request& r, SimTime t) = 0;

 protected:
  ~FollowUps() = default;
};

class ClosedLoop : public LifecycleSubscriber {
 public:
  explicit ClosedLoop(FollowUps& follow_ups) : follow_ups_(follow_ups) {}

  void on_completed(Request& r, SimTime t) {
    if (r.spec.user >= 0) follow_ups_.completed(r, t);
  }

 private:
  FollowUps& follow_ups_;
};

}  // namespace blis
