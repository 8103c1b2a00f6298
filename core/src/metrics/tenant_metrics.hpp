// HEAD's per-tenant block (--output-form head): per tenant label its
// completed requests and their output tokens, and Jain's fairness index over
// those token counts. An observer (metrics/observer.hpp): requests without a
// tenant cost one branch.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"
#include "metrics/observer.hpp"

#include <cstdint>
#include <vector>

namespace blis {

class TenantMetrics : public LifecycleSubscriber, public ReportPart {
 public:
  TenantMetrics() = default;
  explicit TenantMetrics(const ObserverSetup&) {}

  void on_completed(Request& r, SimTime) {
    if (!r.spec.tenant_id.empty()) completed(r);
  }

  // "=== Per-Tenant Metrics ===", under --output-form head.
  void text_blocks(const ReportScope& s, std::string& out) const override;

 private:
  struct Tenant {
    Label id;
    int64_t requests = 0, tokens = 0;
  };
  void completed(const Request& r);

  std::vector<Tenant> tenants_;  // in order of first completion (few)
};

}  // namespace blis
