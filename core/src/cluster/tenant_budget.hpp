// BLIS HEAD's tenant budgets (--tenant-budgets, the policy file's
// tenant_budgets): each budgeted tenant may hold a share of the cluster's
// batch slots (instances x --max-num-running-reqs at the start). A tenant
// holds a slot from its request's routing until the request leaves its
// instance (completed, dropped, timed out, evicted, failed); a split P/D
// request holds one for its prefill and one for its decode, from its KV's
// arrival (HEAD). While a tenant holds more than its share, its sheddable
// requests are rejected at admission ("tenant-budget-shed"), before the
// admission policy or the gateway queue. A lifecycle subscriber: without
// budgets each signal costs one branch.
#pragma once

#include "engine/lifecycle.hpp"
#include "engine/request.hpp"

#include <blis/label.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis {

// tenant → fraction in [0, 1], in the order written; empty = no budgets.
using TenantBudgetConfig = std::vector<std::pair<std::string, double>>;

class TenantBudget : public LifecycleSubscriber {
 public:
  TenantBudget(const TenantBudgetConfig& budgets, int64_t capacity);

  void on_routed(Request& r, const RoutingChoice&) { started(r); }
  // P/D: a split request's decode takes its own slot when its KV arrives.
  void started(const Request& r) {
    if (!tenants_.empty()) change(r.spec.tenant_id, +1);
  }
  void on_departed(Request& r, SimTime) {
    if (!tenants_.empty()) change(r.spec.tenant_id, -1);
  }

  // Whether the tenant holds more slots than its share (HEAD's
  // IsOverBudget: in flight > fraction x capacity); no budget: never.
  bool over(const Label& tenant) const { return !tenants_.empty() && over_budget(tenant); }

 private:
  struct Tenant {
    Label id;
    double limit;  // fraction x capacity
    int64_t in_flight = 0;
  };
  bool over_budget(const Label& tenant) const;
  void change(const Label& tenant, int delta);

  std::vector<Tenant> tenants_;  // the budgeted ones (few)
};

}  // namespace blis
