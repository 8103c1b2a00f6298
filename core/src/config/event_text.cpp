// The text of a scenario event (blis/scenario_events.hpp): space-separated
// key=value pairs. TOML [[events]] tables and Lua `events` tables are written
// as this text by their readers, so every writer meets the same checks.
#include <blis/errors.hpp>
#include <blis/scenario_events.hpp>
#include <blis/settings.hpp>

#include "util/compact_text.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>

namespace blis {
namespace {

std::optional<double> number(const std::string& s) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

const std::map<std::string, EventAction>& actions() {
  static const std::map<std::string, EventAction> m = {
      {"fail", EventAction::Fail},       {"drain", EventAction::Drain},
      {"restore", EventAction::Restore}, {"slow", EventAction::Slow},
      {"rate", EventAction::Rate},       {"weight", EventAction::Weight},
      {"routing", EventAction::Routing}, {"add", EventAction::Add},
      {"remove", EventAction::Remove},   {"workload", EventAction::Workload},
      {"adapter", EventAction::Adapter}, {"gateway", EventAction::Gateway},
      {"tier", EventAction::Tier}};
  return m;
}

const std::map<std::string, TriggerMetric>& metrics() {
  static const std::map<std::string, TriggerMetric> m = {{"queue_depth", TriggerMetric::QueueDepth},
                                                         {"running", TriggerMetric::Running},
                                                         {"in_flight", TriggerMetric::InFlight},
                                                         {"kv_usage", TriggerMetric::KvUsage}};
  return m;
}

std::string names(const auto& m) {
  std::string out;
  for (const auto& [k, v] : m) text::append(out, ", ", k);
  return out;
}

}  // namespace

namespace {

// One event text being read: its key=value pairs, taken as they are used, so
// that whatever is left at the end is a key the action does not know.
class EventReader {
 public:
  EventReader(const std::string& text, const RecordPlace& place) : text_(text), place_(place) {
    for (auto& p : compact::pairs(text, compact::kSpaced, place.where, fmt::format("event '{}': ", text))) {
      last_ = p.key;
      if (!kv_.emplace(p.key, std::move(p.value)).second) throw bad(fmt::format("'{}' is given twice", p.key));
    }
    last_.clear();
  }

  // A message about the value read last, placed where that value was given.
  InputError bad(const std::string& what) const {
    return InputError(place_.of(last_), fmt::format("event '{}': {}", text_, what));
  }
  // A message about the event as a whole, placed where it was given.
  InputError bad_event(const std::string& what) const {
    return InputError(place_.where, fmt::format("event '{}': {}", text_, what));
  }
  std::optional<std::string> take(const char* key) {
    auto it = kv_.find(key);
    if (it == kv_.end()) return std::nullopt;
    std::string v = it->second;
    kv_.erase(it);
    last_ = key;
    return v;
  }
  std::string need(const char* key, const char* what) {
    auto v = take(key);
    if (!v) throw bad_event(fmt::format("needs {}={}", key, what));
    return *v;
  }
  double num(const char* key, const std::string& v) const {
    auto x = number(v);
    if (!x) throw bad(fmt::format("{}={} is not a finite number", key, v));
    return *x;
  }
  // An instance index, 0 to 10^6.
  int32_t instance(const std::string& v) const {
    const auto x = number(v);
    if (!x || *x < 0 || *x != std::floor(*x) || *x > 1e6) throw bad(fmt::format("instance={} is not an instance index", v));
    return static_cast<int32_t>(*x);
  }
  bool has(const char* key) const { return kv_.count(key) != 0; }
  // The first key no reader took, if any.
  std::optional<std::string> left_over() {
    if (kv_.empty()) return std::nullopt;
    last_ = kv_.begin()->first;
    return last_;
  }

 private:
  const std::string& text_;
  const RecordPlace& place_;
  std::string last_;  // the key read last ("" before any)
  std::map<std::string, std::string> kv_;
};

// at=TIME or when=METRIC>VALUE (or the default time, when given).
void read_trigger(EventReader& in, ScenarioEvent& e, SimTime default_at) {
  auto at = in.take("at");
  auto when = in.take("when");
  if (!at && !when && default_at >= 0) {
    e.at = default_at;
  } else if (at.has_value() == when.has_value()) {
    throw in.bad_event("needs exactly one of at=TIME (e.g. at=30s) and when=METRIC>VALUE");
  } else if (at) {
    auto us = duration_text_us(*at);
    if (!us || *us < 0)
      throw in.bad(fmt::format("at={} is not a duration >= 0 (60s, 500ms, 1m30s, 250us)", *at));
    e.at = *us;
  } else {
    const auto op = when->find_first_of("<>");
    if (op == std::string::npos) throw in.bad(fmt::format("when={} must read METRIC>VALUE or METRIC<VALUE", *when));
    const std::string metric = when->substr(0, op);
    const auto m = metrics().find(metric);
    if (m == metrics().end())
      throw in.bad(fmt::format("unknown metric '{}'; metrics are {}", metric, names(metrics())));
    e.metric = m->second;
    e.above = (*when)[op] == '>';
    e.threshold = in.num("when", when->substr(op + 1));
  }
}

// A slowdown factor, bounded so that a slowed time stays a time (a factor of
// 1e20 once overflowed into a faster instance, 1e15 into a negative time).
void read_slowdown(EventReader& in, ScenarioEvent& e, const char* what) {
  e.factor = in.num("factor", in.need("factor", what));
  if (!(e.factor >= 1e-3 && e.factor <= 1e3))
    throw in.bad(fmt::format("factor={} is not a slowdown in [0.001, 1000]", e.factor));
}

// fail, drain, restore, slow: one instance (of the cluster, or of pool=NAME),
// and what happens to it.
void read_instance_action(EventReader& in, ScenarioEvent& e) {
  if (e.action == EventAction::Fail) {
    const std::string mode = in.take("requests").value_or("reroute");
    if (mode != "reroute" && mode != "fail") throw in.bad("requests= must be reroute or fail");
    e.reroute = mode == "reroute";
  }
  e.pool = in.take("pool").value_or("");
  e.instance =
      in.instance(in.need("instance", "N (an instance index; with pool=NAME, its index in the pool)"));
  if (e.action == EventAction::Slow) read_slowdown(in, e, "F (step times are multiplied by F)");
}

// tier: tier=cpu or tier=K (the K-th secondary tier), factor=F, on
// instance=N (or pool=NAME instance=K) or, without it, every instance.
void read_tier_action(EventReader& in, ScenarioEvent& e) {
  const std::string t =
      in.need("tier", "cpu or K (the K-th of --kv-offload-config's secondary_tiers, from 1)");
  if (t == "cpu") {
    e.tier = 0;
  } else {
    const auto x = number(t);
    if (!x || *x < 1 || *x != std::floor(*x) || *x > 1000)
      throw in.bad(
          fmt::format("tier={} is not a tier: cpu, or K >= 1 for the K-th of --kv-offload-config's "
                      "secondary_tiers",
                      t));
    e.tier = static_cast<int32_t>(*x);
  }
  read_slowdown(in, e, "F (the tier's transfer times are multiplied by F)");
  e.pool = in.take("pool").value_or("");
  if (auto i = in.take("instance"))
    e.instance = in.instance(*i);
  else if (!e.pool.empty())
    throw in.bad("pool= names the pool of instance=K: give instance= too (or neither, for every instance)");
}

// add, remove: instances of a pool, and for remove how they leave.
void read_fleet_action(EventReader& in, ScenarioEvent& e) {
  e.pool = in.take("pool").value_or("");
  if (auto c = in.take("count")) {
    const auto x = number(*c);
    if (!x || *x < 1 || *x != std::floor(*x) || *x > 100000)
      throw in.bad(fmt::format("count={} is not an instance count in [1, 100000]", *c));
    e.count = static_cast<int32_t>(*x);
  }
  if (e.action == EventAction::Add) return;
  if (auto i = in.take("instance")) {
    const int32_t index = in.instance(*i);
    if (!e.pool.empty() || in.has("count") || e.count != 1)
      throw in.bad("instance= names one instance: leave out pool= and count=");
    e.instance = index;
  }
  const std::string drain = in.take("drain").value_or("wait");
  if (drain == "wait")
    e.drain = DrainMode::Wait;
  else if (drain == "redirect")
    e.drain = DrainMode::Redirect;
  else if (drain == "immediate")
    e.drain = DrainMode::Immediate;
  else
    throw in.bad(fmt::format("drain={} must be wait, redirect or immediate", drain));
}

// adapter: load=ID or unload=ID, on instance=N or (without it) every instance.
void read_adapter_action(EventReader& in, ScenarioEvent& e) {
  auto load = in.take("load");
  auto unload = in.take("unload");
  if (load.has_value() == unload.has_value())
    throw in.bad_event("needs exactly one of load=ADAPTER and unload=ADAPTER (an adapter of --lora-config)");
  e.load = load.has_value();
  e.adapter = load ? *load : *unload;
  if (e.adapter.empty()) throw in.bad(fmt::format("{}= needs an adapter id", e.load ? "load" : "unload"));
  if (auto i = in.take("instance")) e.instance = in.instance(*i);
}

// rate: factor=F, and tenant=T for one tenant's clients only.
void read_rate_action(EventReader& in, ScenarioEvent& e) {
  e.factor = in.num("factor", in.need("factor", "F (the arrival rate is multiplied by F)"));
  if (!(e.factor >= 1e-6 && e.factor <= 1e6))
    throw in.bad(fmt::format("factor={} is not a rate factor in [0.000001, 1000000]", e.factor));
  if (auto t = in.take("tenant")) {
    if (t->empty()) throw in.bad("tenant= needs a tenant id (a tenant_id of the workload spec's clients)");
    e.tenant = *t;
  }
}

// gateway: band_capacity=N and/or queue_depth=N (0 = unlimited).
void read_gateway_action(EventReader& in, ScenarioEvent& e) {
  auto size = [&](const char* key) -> int64_t {
    auto v = in.take(key);
    if (!v) return -1;
    const auto x = number(*v);
    if (!x || *x < 0 || *x != std::floor(*x) || *x > 1e12)
      throw in.bad(fmt::format("{}={} is not a request count >= 0 (0 = unlimited)", key, *v));
    return static_cast<int64_t>(*x);
  };
  e.band_capacity = size("band_capacity");
  e.queue_depth = size("queue_depth");
  if (e.band_capacity < 0 && e.queue_depth < 0)
    throw in.bad_event(
        "needs band_capacity=N (--per-band-capacity) or queue_depth=N (--max-gateway-queue-depth), "
        "or both; 0 = unlimited");
}

// The keys of the event's action.
void read_action(EventReader& in, ScenarioEvent& e) {
  switch (e.action) {
    case EventAction::Fail:
    case EventAction::Drain:
    case EventAction::Restore:
    case EventAction::Slow: read_instance_action(in, e); break;
    case EventAction::Rate: read_rate_action(in, e); break;
    case EventAction::Weight:
      e.scorer = in.need("scorer", "NAME (a scorer of --routing-scorers)");
      e.weight = in.num("weight", in.need("weight", "W"));
      break;
    case EventAction::Routing: e.policy = in.need("policy", "NAME (round-robin, least-loaded, weighted, ...)"); break;
    case EventAction::Workload:
      e.spec = in.need("spec", "FILE (a workload spec, YAML)");
      // Its arrivals are drawn ahead of time: its start must be known.
      if (e.at < 0) throw in.bad_event("a workload change needs at=TIME, not a threshold trigger");
      break;
    case EventAction::Add:
    case EventAction::Remove: read_fleet_action(in, e); break;
    case EventAction::Adapter: read_adapter_action(in, e); break;
    case EventAction::Tier: read_tier_action(in, e); break;
    case EventAction::Gateway: read_gateway_action(in, e); break;
  }
}

}  // namespace

ScenarioEvent parse_scenario_event(const std::string& text, const RecordPlace& place, SimTime default_at) {
  EventReader in(text, place);
  ScenarioEvent e;
  e.text = text::trim(text);
  e.where = place.where;
  const std::string action = in.need("action", names(actions()).c_str());
  const auto a = actions().find(action);
  if (a == actions().end()) throw in.bad(fmt::format("unknown action '{}'; actions are {}", action, names(actions())));
  e.action = a->second;
  read_trigger(in, e, default_at);
  read_action(in, e);
  if (auto key = in.left_over()) throw in.bad(fmt::format("unknown or unused key '{}' for action {}", *key, action));
  return e;
}

}  // namespace blis
