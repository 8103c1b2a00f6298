// One client's requests in arrival order (spec workload §6.6-§6.8), drawn
// lazily from the client's own random stream in exactly the reference's draw
// order: ordinary clients (with lifecycle windows and multimodal inputs) and
// multi-turn session clients.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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
  // A multi-turn client's stream tells where each pending round's session
  // stands (RequestStream::pending_session): closed-loop sessions.
  bool track_sessions = false;
};

// For each seed, whether no other seed in `seeds` (nor `also_taken`, the
// seed of the stream that draws the shared prefixes) gives the same random
// stream: Go reduces seeds modulo 2^31 - 1, so distinct seeds can collide.
std::vector<bool> own_streams(const std::vector<int64_t>& seeds, int64_t also_taken);

// Where a multi-turn session stands at its pending round: its id (the
// reference's "sess_<id>"), whether its round 0 was kept, and at round 0
// with accumulation the conversation a closed-loop session's round 1 goes on
// from: round 0's sequence but its last output token, `len` tokens past the
// prefix, whose first `blocks` full blocks are round 0's first block hashes
// and `state` has absorbed `fill` tokens of the next.
struct SessionContext {
  int64_t id = 0;
  bool round0_kept = false;
  BlockHasher state{kEmptyPrefixHash};
  int32_t fill = 0;
  size_t blocks = 0;
  int64_t len = 0;
};

class RequestStream {
 public:
  virtual ~RequestStream() = default;
  // Makes the client's next request pending; false once it has no more.
  // Requests come in (arrival, generation order) order.
  virtual bool advance() = 0;
  int64_t pending_arrival() const { return pending_.arrival_us; }
  // The pending request's round within its multi-turn session (0 for other clients).
  int64_t pending_round() const { return pending_round_; }
  // Of a multi-turn client, the pending round's session (null for other clients).
  virtual const SessionContext* pending_session() const { return nullptr; }
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
  std::optional<ThinkTimeDist> think_dist_;  // drawn from a user's blueprint stream before its lengths
  std::vector<int64_t> user_seeds_, blueprint_seeds_;
  std::vector<std::unique_ptr<GoRand>> blueprints_;  // made at a user's first follow-up
  int32_t next_user_ = 0;
};

// The shape of a closed-loop session client's follow-up rounds.
struct SessionShape {
  explicit SessionShape(const StreamSetup& setup);
  std::string where;
  LengthSampler input, output;
  const SharedPrefix* prefix;
  int64_t horizon;
  int32_t block_size;
  int64_t think;
  int64_t max_rounds;
  bool accumulate;
};

// The later rounds of one closed-loop session (--session-mode closed-loop, as
// HEAD runs multi-turn clients): round r + 1 arrives think_time_us after
// round r completes, until max_rounds or past the horizon. Each is drawn from
// the session's own stream, seeded `seed`, as draw() of a concurrency user
// draws; with context_growth accumulate its prompt is the conversation so far
// (prefix, every earlier round's input and output) and then its own input.
class SessionRounds {
 public:
  // `round0`: the session's round 0 as emitted; `ctx`: the session there.
  SessionRounds(const SessionShape& shape, int64_t seed, const WorkloadRequest& round0, const SessionContext& ctx);
  // The round after `done_round`, which completed at t, without its id;
  // false when the session has no more.
  bool follow_up(int64_t done_round, int64_t t, WorkloadRequest& out);

 private:
  const SessionShape* shape_;
  GoRand rng_;
  std::vector<uint64_t> ctx_hashes_;  // with accumulation: full blocks of the conversation so far
  BlockHasher ctx_state_{kEmptyPrefixHash};
  int32_t ctx_fill_ = 0;
  int64_t ctx_len_ = 0;  // tokens past the prefix
};

}  // namespace blis::workload
