// Requests that lose their instance or find none (scenario events, instance
// removal, P/D): back to routing as they arrived, failed, or rejected at
// routing. Counts what it did for the report and the end-of-run warning.
#pragma once

#include "cluster/cluster_core.hpp"

#include <cstdint>
#include <map>
#include <string_view>

namespace blis {

class PdFlow;

class Rerouting {
 public:
  explicit Rerouting(const ClusterCore& core) : core_(core) {}

  // P/D: a re-routed request is decided and split again (null: no P/D).
  void set_pd(PdFlow* pd) { pd_ = pd; }

  // The request in `slot` lost its instance: back to routing if `reroute`
  // and it has delivered no token yet (a client mid-stream sees its stream
  // break: it fails either way), else failed.
  void lose(uint32_t slot, bool reroute);
  // Back to routing, as it arrived.
  void reroute(uint32_t slot);
  // No instance takes the request in `slot`: rejected at routing, its slot freed.
  void reject(uint32_t slot, std::string_view reason);

  int64_t rerouted() const { return rerouted_; }
  int64_t unroutable() const { return unroutable_; }
  const std::map<int32_t, int64_t>& unroutable_by_class() const { return unroutable_by_class_; }

 private:
  ClusterCore core_;
  PdFlow* pd_ = nullptr;
  int64_t rerouted_ = 0;
  int64_t unroutable_ = 0;  // rejected because no instance took traffic (for the warning)
  std::map<int32_t, int64_t> unroutable_by_class_;
};

}  // namespace blis
