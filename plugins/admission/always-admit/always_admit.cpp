// always-admit admission policy: the default, admits every request with an
// empty reason (spec cluster §2.2).
#include <blis/plugin.hpp>

#include <string>

namespace {

class AlwaysAdmit {
 public:
  explicit AlwaysAdmit(blis::sdk::Context&) {}

  bool admit(const blis_route_input&, std::string&) const { return true; }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::admission_policy<AlwaysAdmit>("always-admit", "1.0.0", "Admits every request",
                                                      BLIS_NEED_DECLARED_READS))
