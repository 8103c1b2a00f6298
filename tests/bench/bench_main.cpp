// The one main() of the benchmark binary; benchmarks live in the other files.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
