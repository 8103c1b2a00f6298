// The --policy-config reader (blis::load_policy_config), the reference's YAML form.
#include "fuzz_input.hpp"

#include <blis/policy_config.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("policy", ".yaml");
  blis_fuzz::write_file(path, data, size);
  blis_fuzz::expect_only_blis_errors([&] { blis::load_policy_config(path); });
  return 0;
}
