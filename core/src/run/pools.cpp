#include "run/pools.hpp"

#include "config/pool_text.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <set>

namespace blis {

std::vector<ResolvedPool> resolve_pools(const RunConfig& config, RunContext& ctx) {
  std::vector<ResolvedPool> out;
  std::set<std::string> names;
  for (size_t i = 0; i < config.pool_specs.size(); ++i) {
    const std::string& text = config.pool_specs[i];
    const RecordPlace place = config.record_place("pools", i);
    const std::string& where = place.where;
    config::PoolText t = config::read_pool_text(text, place);
    if (!names.insert(t.name).second)
      throw InputError(where, fmt::format("pool '{}': the name '{}' is taken by another pool", text, t.name));
    ResolvedPool p;
    p.name = t.name;
    p.count = t.count;
    p.cost_per_hour = t.cost_per_hour;
    p.lifecycle = t.lifecycle;
    p.role = t.role;
    RunConfig c = config;
    c.pool_specs.clear();
    apply_settings(c, t.settings);
    c.pool().instances = p.count;
    p.run = resolve(c, ctx);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace blis
