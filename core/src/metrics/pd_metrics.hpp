// What P/D disaggregation adds to a run's metrics (spec head §5.4): the
// parents' TTFTs, the transfers and their drops, the prefills each instance
// finished. A lifecycle subscriber (the parents' first tokens, requests still
// on the wire when the run stops) that the cluster also tells about
// transfers. Off (no P/D pools), it keeps nothing.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis {

struct InstanceMetrics;

class PdMetrics : public LifecycleSubscriber, public ReportPart {
 public:
  // `roles`: each instance's kPdPrefill | kPdDecode bits (cluster/pd.hpp);
  // empty = off.
  explicit PdMetrics(std::vector<uint8_t> roles) : roles_(std::move(roles)), prefills_(roles_.size(), 0) {}

  bool enabled() const { return !roles_.empty(); }
  const std::vector<uint8_t>& roles() const { return roles_; }

  // The parent's first token comes from its decode instance (the collector,
  // earlier in the list, has written r.timing's ttft).
  void on_first_token(Request& r, SimTime) {
    if (r.pd == PdStage::Decode) parent_ttft_.push_back(r.timing.ttft());
  }
  void on_stopped(Request& r) {
    if (r.state == RequestState::Transfer) ++in_transfer_;
  }

  // From the cluster (cluster/pd_flow.cpp).
  void disaggregated() { ++disaggregated_; }
  void prefilled(int32_t instance) { ++prefills_[static_cast<size_t>(instance)]; }
  void transfer_started() { ++transfers_; }
  void dropped_at_decode() { ++dropped_at_decode_; }
  void transfer_done(int64_t duration) { durations_.push_back(duration); }
  void contention(int64_t peak, double mean_depth) {
    contention_ = true;
    peak_ = peak;
    mean_depth_ = mean_depth;
  }

  int64_t in_transfer() const { return in_transfer_; }
  int64_t dropped_at_decode() const { return dropped_at_decode_; }

  // "=== PD Metrics ===" over `seconds` of simulated time; `instances` are
  // the run's, in index order.
  // head_form: HEAD's block, only when a request was disaggregated, without
  // the transfer and in-transfer counts.
  std::string block(const std::vector<InstanceMetrics>& instances, double seconds, bool head_form = false) const;
  // The same figures as a JSON object (--format json), indented for its
  // place as a top-level member; an idle pool's ratio is null.
  std::string json(const std::vector<InstanceMetrics>& instances, double seconds) const;

  // Its part of the report: the block (HEAD's in HEAD's form; the seed's in
  // --format table), "pd" in --format json.
  void text_blocks(const ReportScope& s, std::string& out) const override {
    out += block(s.instances, s.runtime_s, s.head);
  }
  void table_lines(const ReportScope& s, TablePlace place, std::string& out) const override {
    if (place != TablePlace::Blocks) return;
    out += '\n';
    out += block(s.instances, s.runtime_s);
  }
  void json_members(const ReportScope& s, JsonPlace place, std::string& out) const override {
    if (place == JsonPlace::Tail) out += ",\n  \"pd\": " + json(s.instances, s.runtime_s);
  }

 private:
  // Sub-requests per second of the prefill and the decode pool.
  std::pair<double, double> throughputs(const std::vector<InstanceMetrics>& instances, double seconds) const;

  std::vector<uint8_t> roles_;
  std::vector<int64_t> prefills_;  // prefills finished, per instance
  std::vector<int64_t> parent_ttft_, durations_;
  int64_t disaggregated_ = 0, transfers_ = 0, dropped_at_decode_ = 0, in_transfer_ = 0;
  bool contention_ = false;
  int64_t peak_ = 0;
  double mean_depth_ = 0;
};

}  // namespace blis
