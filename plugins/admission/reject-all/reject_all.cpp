// reject-all admission policy: a pathological template for testing that
// rejects every request (spec cluster §2.4).
#include <blis/plugin.hpp>

#include <string>

namespace {

class RejectAll {
 public:
  explicit RejectAll(blis::sdk::Context&) {}

  bool admit(const blis_route_input&, std::string& reason) const {
    reason = "reject-all";
    return false;
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::admission_policy<RejectAll>(
    "reject-all", "1.0.0", "Rejects every request (pathological template for testing)",
    BLIS_NEED_DECLARED_READS))
