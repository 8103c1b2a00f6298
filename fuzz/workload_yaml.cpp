// The workload-spec reader (blis::load_workload_spec) and, for what it
// accepts, the spec's validation.
#include "fuzz_input.hpp"

#include <blis/workload.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("workload", ".yaml");
  blis_fuzz::write_file(path, data, size);
  blis_fuzz::expect_only_blis_errors([&] {
    blis::WorkloadSpec spec = blis::load_workload_spec(path);
    blis::validate_workload_spec(spec);
  });
  return 0;
}
