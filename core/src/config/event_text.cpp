// The text of a scenario event (blis/scenario_events.hpp): space-separated
// key=value pairs. TOML [[events]] tables and Lua `events` tables are written
// as this text by their readers, so every writer meets the same checks.
#include <blis/errors.hpp>
#include <blis/scenario_events.hpp>
#include <blis/settings.hpp>

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
      {"fail", EventAction::Fail},       {"drain", EventAction::Drain}, {"restore", EventAction::Restore},
      {"slow", EventAction::Slow},       {"rate", EventAction::Rate},   {"weight", EventAction::Weight},
      {"routing", EventAction::Routing}, {"add", EventAction::Add},       {"remove", EventAction::Remove},
      {"workload", EventAction::Workload}};
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

ScenarioEvent parse_scenario_event(const std::string& text, const std::string& where, SimTime default_at) {
  auto bad = [&](const std::string& what) {
    return InputError(where, fmt::format("event '{}': {}", text, what));
  };
  std::map<std::string, std::string> kv;
  for (const std::string& part : text::split(text, ' ')) {
    if (part.empty()) continue;
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) throw bad(fmt::format("'{}' is not key=value", part));
    if (!kv.emplace(part.substr(0, eq), part.substr(eq + 1)).second)
      throw bad(fmt::format("'{}' is given twice", part.substr(0, eq)));
  }
  ScenarioEvent e;
  e.text = text::trim(text);
  auto take = [&](const char* key) -> std::optional<std::string> {
    auto it = kv.find(key);
    if (it == kv.end()) return std::nullopt;
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  auto need = [&](const char* key, const char* what) {
    auto v = take(key);
    if (!v) throw bad(fmt::format("needs {}={}", key, what));
    return *v;
  };
  auto num = [&](const char* key, const std::string& v) {
    auto x = number(v);
    if (!x) throw bad(fmt::format("{}={} is not a finite number", key, v));
    return *x;
  };

  const std::string action = need("action", names(actions()).c_str());
  const auto a = actions().find(action);
  if (a == actions().end()) throw bad(fmt::format("unknown action '{}'; actions are {}", action, names(actions())));
  e.action = a->second;

  auto at = take("at");
  auto when = take("when");
  if (!at && !when && default_at >= 0) {
    e.at = default_at;
  } else if (at.has_value() == when.has_value()) {
    throw bad("needs exactly one of at=TIME (e.g. at=30s) and when=METRIC>VALUE");
  } else if (at) {
    auto us = duration_text_us(*at);
    if (!us || *us < 0) throw bad(fmt::format("at={} is not a duration >= 0 (60s, 500ms, 2m, 1h, 250us)", *at));
    e.at = *us;
  } else {
    const auto op = when->find_first_of("<>");
    if (op == std::string::npos)
      throw bad(fmt::format("when={} must read METRIC>VALUE or METRIC<VALUE", *when));
    const std::string metric = when->substr(0, op);
    const auto m = metrics().find(metric);
    if (m == metrics().end())
      throw bad(fmt::format("unknown metric '{}'; metrics are {}", metric, names(metrics())));
    e.metric = m->second;
    e.above = (*when)[op] == '>';
    e.threshold = num("when", when->substr(op + 1));
  }

  switch (e.action) {
    case EventAction::Fail: {
      const std::string mode = take("requests").value_or("reroute");
      if (mode != "reroute" && mode != "fail") throw bad("requests= must be reroute or fail");
      e.reroute = mode == "reroute";
      [[fallthrough]];
    }
    case EventAction::Drain:
    case EventAction::Restore:
    case EventAction::Slow: {
      const std::string i = need("instance", "N (an instance index)");
      const auto x = number(i);
      if (!x || *x < 0 || *x != std::floor(*x) || *x > 1e6) throw bad(fmt::format("instance={} is not an instance index", i));
      e.instance = static_cast<int32_t>(*x);
      if (e.action == EventAction::Slow) {
        // Bounded so that a slowed step stays a time (a factor of 1e20 once
        // overflowed into a faster instance, 1e15 into a negative time).
        e.factor = num("factor", need("factor", "F (step times are multiplied by F)"));
        if (!(e.factor >= 1e-3 && e.factor <= 1e3))
          throw bad(fmt::format("factor={} is not a slowdown in [0.001, 1000]", e.factor));
      }
      break;
    }
    case EventAction::Rate:
      e.factor = num("factor", need("factor", "F (the arrival rate is multiplied by F)"));
      if (!(e.factor >= 1e-6 && e.factor <= 1e6))
        throw bad(fmt::format("factor={} is not a rate factor in [0.000001, 1000000]", e.factor));
      break;
    case EventAction::Weight:
      e.scorer = need("scorer", "NAME (a scorer of --routing-scorers)");
      e.weight = num("weight", need("weight", "W"));
      break;
    case EventAction::Routing: e.policy = need("policy", "NAME (round-robin, least-loaded, weighted, ...)"); break;
    case EventAction::Workload:
      e.spec = need("spec", "FILE (a workload spec, YAML)");
      // Its arrivals are drawn ahead of time: its start must be known.
      if (e.at < 0) throw bad("a workload change needs at=TIME, not a threshold trigger");
      break;
    case EventAction::Add:
    case EventAction::Remove: {
      e.pool = take("pool").value_or("");
      if (auto c = take("count")) {
        const auto x = number(*c);
        if (!x || *x < 1 || *x != std::floor(*x) || *x > 100000)
          throw bad(fmt::format("count={} is not an instance count in [1, 100000]", *c));
        e.count = static_cast<int32_t>(*x);
      }
      if (e.action == EventAction::Add) break;
      if (auto i = take("instance")) {
        const auto x = number(*i);
        if (!x || *x < 0 || *x != std::floor(*x) || *x > 1e6) throw bad(fmt::format("instance={} is not an instance index", *i));
        if (!e.pool.empty() || kv.count("count") != 0 || e.count != 1)
          throw bad("instance= names one instance: leave out pool= and count=");
        e.instance = static_cast<int32_t>(*x);
      }
      const std::string drain = take("drain").value_or("wait");
      if (drain == "wait")
        e.drain = DrainMode::Wait;
      else if (drain == "redirect")
        e.drain = DrainMode::Redirect;
      else if (drain == "immediate")
        e.drain = DrainMode::Immediate;
      else
        throw bad(fmt::format("drain={} must be wait, redirect or immediate", drain));
      break;
    }
  }
  if (!kv.empty()) throw bad(fmt::format("unknown or unused key '{}' for action {}", kv.begin()->first, action));
  return e;
}

}  // namespace blis
