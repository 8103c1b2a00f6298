// The CSV trace reader (blis::make_trace_workload), drained of its first
// requests: a header, rows, optional columns, token counts and prefixes.
#include "fuzz_input.hpp"

#include <blis/workload.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("trace", ".csv");
  blis_fuzz::write_file(path, data, size);
  blis_fuzz::expect_only_blis_errors([&] {
    auto source = blis::make_trace_workload(path, /*horizon=*/int64_t{1} << 50, /*max_requests=*/64,
                                            /*block_size=*/16, /*seed=*/42);
    blis::WorkloadRequest request;
    while (source->next(request)) {
    }
  });
  return 0;
}
