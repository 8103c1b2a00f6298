// The TOML scenario reader (blis::load_toml_scenario) on arbitrary bytes.
#include "fuzz_input.hpp"

#include <blis/scenario.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("scenario", ".toml");
  blis_fuzz::write_file(path, data, size);
  blis_fuzz::expect_only_blis_errors([&] { blis::load_toml_scenario(path); });
  return 0;
}
