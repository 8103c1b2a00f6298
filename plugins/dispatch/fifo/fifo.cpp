// fifo dispatch order (BLIS HEAD's default): the earliest arrival among the
// bands allowed to send, whatever its band. Every request has the same key,
// so the gateway dispatches in enqueue order across the bands
// (docs/gateway.md).
#include <blis/plugin.hpp>

namespace {

class Fifo {
 public:
  explicit Fifo(blis::sdk::Context&) {}
  double key(const blis_dispatch_input&) { return 0; }
};

}  // namespace

BLIS_PLUGINS((blis::sdk::dispatch_order<Fifo, BLIS_DISPATCH_ACROSS_BANDS>(
    "fifo", "1.0.0", "The earliest arrival among the bands allowed to send")))
