// One client's requests in arrival order (spec workload §6.6-§6.8), drawn
// lazily from the client's own random stream in exactly the reference's draw
// order: ordinary clients (with lifecycle windows and multimodal inputs) and
// multi-turn session clients.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <vector>

#include "blis/workload.hpp"
#include "workload/content.hpp"
#include "workload/samplers.hpp"

namespace blis::workload {

struct StreamSetup {
  const ClientSpec* client = nullptr;  // must outlive the stream
  std::string where;                   // field path naming the client in errors
  double rate = 0;                     // requests per µs
  int64_t seed = 0;                    // seed of the client's stream
  const SharedPrefix* prefix = nullptr;  // the client's group prefix, if any; outlives the stream
  int64_t horizon = 0;                 // arrivals are < horizon
  int64_t cap = 0;                     // requests a session client may generate (0 = no cap; §6.5)
  int32_t block_size = 16;
  // No other stream of the workload draws from the same random stream, so
  // the tokens this client draws for itself are its own
  // (WorkloadRequest::shareable_blocks; own_streams()).
  bool own_stream = true;
};

// For each seed, whether no other seed in `seeds` (nor `also_taken`, the
// seed of the stream that draws the shared prefixes) gives the same random
// stream: Go reduces seeds modulo 2^31 - 1, so distinct seeds can collide.
std::vector<bool> own_streams(const std::vector<int64_t>& seeds, int64_t also_taken);

class RequestStream {
 public:
  virtual ~RequestStream() = default;
  // Makes the client's next request pending; false once it has no more.
  // Requests come in (arrival, generation order) order.
  virtual bool advance() = 0;
  int64_t pending_arrival() const { return pending_.arrival_us; }
  // The pending request's round within its multi-turn session (0 for other clients).
  int64_t pending_round() const { return pending_round_; }
  // Hands the pending request over; the hash buffers are swapped and the
  // strings assigned, so a caller reusing `out` causes no allocation.
  void take(WorkloadRequest& out);

 protected:
  explicit RequestStream(const ClientSpec& client);
  WorkloadRequest pending_;
  int64_t pending_round_ = 0;
};

// Builds the stream for a client; errors name `setup.where`.
std::unique_ptr<RequestStream> make_request_stream(const StreamSetup& setup);

// A concurrency client (spec head §4.2): `concurrency` users. The stream
// yields each user's first request (user u at u·think/N when think > 0 and
// N > 1, else 0); follow_up() makes a user's next one. Per user, `users`
// (the rand.New(seed + 10007) stream shared by all concurrency clients)
// draws a user seed, whose stream draws the first request, then a blueprint
// seed, whose stream draws every follow-up: input length, output length,
// input ids, output ids, as an ordinary client draws (spec workload §6.6).
// At most `max_users` users (the request cap left; 0 = no cap).
class ConcurrencyStream final : public RequestStream {
 public:
  ConcurrencyStream(const StreamSetup& setup, GoRand& users, int64_t max_users);

  bool advance() override;
  int32_t users() const { return static_cast<int32_t>(user_seeds_.size()); }
  // The next request of user `u` (of this client) after a completion at t,
  // without its id; false when it would arrive at or after the horizon.
  bool follow_up(int32_t u, int64_t t, WorkloadRequest& out);

 private:
  void draw(GoRand& rng, WorkloadRequest& out) const;

  std::string where_;
  LengthSampler input_, output_;
  const SharedPrefix* prefix_;
  int64_t horizon_;
  int32_t block_size_;
  int64_t think_;
  std::vector<int64_t> user_seeds_, blueprint_seeds_;
  std::vector<std::unique_ptr<GoRand>> blueprints_;  // made at a user's first follow-up
  int32_t next_user_ = 0;
};

// The later rounds of a closed-loop session (--session-mode closed-loop, as
// HEAD runs multi-turn clients): round r + 1 arrives think_time_us after
// round r completes, until max_rounds or past the horizon. Each is drawn from
// the session's own stream, seeded `seed`, as draw() of a concurrency user
// draws: fresh lengths and ids after the group's prefix (no context
// accumulation).
class SessionRounds {
 public:
  SessionRounds(const StreamSetup& setup, int64_t seed);
  // The round after `done_round`, which completed at t, without its id;
  // false when the session has no more.
  bool follow_up(int64_t done_round, int64_t t, WorkloadRequest& out);

 private:
  std::string where_;
  LengthSampler input_, output_;
  const SharedPrefix* prefix_;
  int64_t horizon_;
  int32_t block_size_;
  int64_t think_;
  int64_t max_rounds_;
  GoRand rng_;
};

}  // namespace blis::workload
