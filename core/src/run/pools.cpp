#include "run/pools.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>

#include <set>

namespace blis {

std::vector<ResolvedPool> resolve_pools(const RunConfig& config, RunContext& ctx) {
  std::vector<ResolvedPool> out;
  std::set<std::string> names;
  for (size_t i = 0; i < config.pool_specs.size(); ++i) {
    const std::string& text = config.pool_specs[i].text;
    const PoolSpec& t = config.pool_specs[i].value;
    const std::string where = config.item_where("pools", i);
    if (!names.insert(t.name).second)
      throw InputError(where, fmt::format("pool '{}': the name '{}' is taken by another pool", text, t.name));
    ResolvedPool p;
    p.name = t.name;
    p.count = t.count;
    p.cost_per_hour = t.cost_per_hour;
    p.lifecycle = t.lifecycle;
    p.lifecycle_text = t.lifecycle_text;
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
