#include "metrics/tenant_metrics.hpp"

#include "metrics/report.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace blis {

void TenantMetrics::completed(const Request& r) {
  for (Tenant& t : tenants_)
    if (t.id == r.spec.tenant_id) {
      ++t.requests;
      t.tokens += r.spec.output_tokens;  // HEAD: the oracle output length
      return;
    }
  tenants_.push_back({r.spec.tenant_id, 1, r.spec.output_tokens});
}

void TenantMetrics::text_blocks(const ReportScope& scope, std::string& out) const {
  if (!scope.head || tenants_.empty()) return;
  std::map<std::string, const Tenant*> sorted;
  for (const Tenant& t : tenants_) sorted.emplace(t.id.str(), &t);
  std::map<std::string, double> tokens;
  out += "=== Per-Tenant Metrics ===\n";
  for (const auto& entry : sorted) {
    out += fmt::format("  {}: requests={}, tokens={}\n", entry.first, entry.second->requests, entry.second->tokens);
    tokens.emplace(entry.first, static_cast<double>(entry.second->tokens));
  }
  out += fmt::format("  Jain Fairness Index: {:.4f}\n", jain_fairness(tokens));
}

}  // namespace blis
