// The online mode of the cluster (blis serve, src/serve/): requests injected
// as the clock is advanced get what the same arrivals get in a batch run,
// every token is announced with the end of its step, and a cancelled
// request leaves wherever it is, its KV freed.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "cluster/live_tap.hpp"

#include <map>
#include <vector>

using namespace blis;
using namespace blis::test;

namespace {

// Every step priced member by member, as blis serve runs its models.
class EveryToken final : public LatencyModel {
 public:
  explicit EveryToken(std::unique_ptr<LatencyModel> inner) : inner_(std::move(inner)) {}
  int64_t step_time(const blis_step_batch& b) override { return inner_->step_time(b); }
  int64_t queueing_time(const blis_request_view& r) override { return inner_->queueing_time(r); }
  int64_t output_token_time() override { return inner_->output_token_time(); }
  int64_t post_decode_overhead() override { return inner_->post_decode_overhead(); }

 private:
  std::unique_ptr<LatencyModel> inner_;
};

struct Heard final : LiveSink {
  std::map<uint64_t, std::vector<SimTime>> tokens;
  std::map<uint64_t, std::pair<SimTime, LiveEnd>> ends;
  void token(const Request& r, SimTime end) override { tokens[r.spec.id].push_back(end); }
  void finished(const Request& r, SimTime t, LiveEnd how) override { ends[r.spec.id] = {t, how}; }
  void preempted(const Request&) override {}
};

class NoRequests final : public WorkloadSource {
 public:
  bool next(WorkloadRequest&) override { return false; }
};

struct Online {
  ClusterConfig cfg;
  Heard heard;
  NoRequests none;
  std::unique_ptr<ClusterSimulation> sim;
  explicit Online(ClusterConfig c) : cfg(std::move(c)) {
    cfg.live = &heard;
    cfg.deadlines = true;
    sim = std::make_unique<ClusterSimulation>(cfg, none, [](int32_t) -> std::unique_ptr<LatencyModel> {
      return std::make_unique<EveryToken>(
          builtin_registries().latency.create("blackbox", CreateArgs{&step_1000_10_5(), 42}));
    });
    sim->start();
  }
};

}  // namespace

TEST_CASE("online: injected requests get what the same arrivals get in a batch run", "[cluster][online]") {
  std::vector<WorkloadRequest> reqs = {make_request(0, 0, 256, 20, 0), make_request(1, 3000, 100, 30, 5000),
                                       make_request(2, 7000, 512, 10, 9000)};
  ClusterConfig cfg;
  cfg.num_instances = 2;
  cfg.keep_records = true;
  VectorSource src(reqs);
  const RunOutcome batch = run_cluster(cfg, src, "blackbox", step_1000_10_5());
  REQUIRE(batch.cluster.records.size() == 3);

  ClusterConfig two_instances;
  two_instances.num_instances = 2;
  Online two(two_instances);
  for (const WorkloadRequest& r : reqs) {
    two.sim->advance(r.arrival_us);
    CHECK(two.sim->now() == r.arrival_us);
    WorkloadRequest spec = r;
    spec.arrival_us = -1;  // set by inject: now
    two.sim->inject(spec);
  }
  two.sim->advance(10'000'000);
  for (const RequestRecord& rec : batch.cluster.records) {
    INFO("request " << rec.id);
    const std::vector<SimTime>& t = two.heard.tokens[rec.id];
    REQUIRE(static_cast<int32_t>(t.size()) == rec.output_tokens);
    CHECK(t.front() - rec.arrival_us == rec.ttft);
    for (size_t k = 1; k < t.size(); ++k) CHECK(t[k] > t[k - 1]);
    REQUIRE(two.heard.ends.count(rec.id) == 1);
    CHECK(two.heard.ends[rec.id].second == LiveEnd::Completed);
    CHECK(two.heard.ends[rec.id].first == t.back());
    CHECK(two.heard.ends[rec.id].first - rec.arrival_us == rec.e2e);
  }
  for (const auto& l : two.sim->loads()) {
    CHECK(l.running + l.waiting + l.used_blocks == 0);
    CHECK(l.total_blocks > 0);
  }
}

TEST_CASE("online: a cancelled request leaves at once, running or on its way", "[cluster][online]") {
  Online o(ClusterConfig{});
  const uint64_t running = o.sim->inject(make_request(0, 0, 256, 5000, 0));
  o.sim->advance(20'000);
  REQUIRE(o.sim->loads()[0].running == 1);
  REQUIRE(o.sim->loads()[0].used_blocks > 0);
  const size_t before = o.heard.tokens[0].size();
  CHECK(before > 0);
  o.sim->cancel(running);
  // A request cancelled as it arrives, before its admission and routing.
  const uint64_t arriving = o.sim->inject(make_request(1, 0, 64, 10, 90000));
  o.sim->cancel(arriving);
  o.sim->advance(1'000'000);
  REQUIRE(o.heard.ends.count(0) == 1);
  CHECK(o.heard.ends[0] == std::make_pair(SimTime{20'000}, LiveEnd::TimedOut));
  REQUIRE(o.heard.ends.count(1) == 1);
  CHECK(o.heard.ends[1].second == LiveEnd::TimedOut);
  CHECK(o.heard.tokens[1].empty());
  // No step of it after the cancellation.
  CHECK(o.heard.tokens[0].size() == before);
  CHECK(o.sim->loads()[0].running == 0);
  CHECK(o.sim->loads()[0].used_blocks == 0);
  // Cancelling again, or a request gone, does nothing.
  o.sim->cancel(running);
  o.sim->advance(2'000'000);
  CHECK(o.heard.ends.size() == 2);
}
