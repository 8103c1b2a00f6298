// One client's requests in arrival order (spec workload §6.6-§6.8), drawn
// lazily from the client's own random stream in exactly the reference's draw
// order: ordinary clients (with lifecycle windows and multimodal inputs) and
// multi-turn session clients.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blis/workload.hpp"
#include "workload/content.hpp"

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
  // Hands the pending request over; the hash buffers are swapped and the
  // strings assigned, so a caller reusing `out` causes no allocation.
  void take(WorkloadRequest& out);

 protected:
  explicit RequestStream(const ClientSpec& client);
  WorkloadRequest pending_;
};

// Builds the stream for a client; errors name `setup.where`.
std::unique_ptr<RequestStream> make_request_stream(const StreamSetup& setup);

}  // namespace blis::workload
