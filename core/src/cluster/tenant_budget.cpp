#include "cluster/tenant_budget.hpp"

#include <algorithm>

namespace blis {

TenantBudget::TenantBudget(const TenantBudgetConfig& budgets, int64_t capacity) {
  // HEAD's guard: a cluster without slots counts as one slot.
  const double slots = static_cast<double>(std::max<int64_t>(capacity, 1));
  for (const auto& [tenant, fraction] : budgets)
    if (!tenant.empty()) tenants_.push_back(Tenant{Label(tenant), fraction * slots});
}

bool TenantBudget::over_budget(const Label& tenant) const {
  if (tenant.empty()) return false;
  for (const Tenant& t : tenants_)
    if (t.id == tenant) return static_cast<double>(t.in_flight) > t.limit;
  return false;
}

// Never below 0 (HEAD's floor).
void TenantBudget::change(const Label& tenant, int delta) {
  if (tenant.empty()) return;
  for (Tenant& t : tenants_)
    if (t.id == tenant) {
      t.in_flight = std::max<int64_t>(t.in_flight + delta, 0);
      return;
    }
}

}  // namespace blis
