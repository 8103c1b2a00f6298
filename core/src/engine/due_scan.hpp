// The pass that finds a step's batch members with something to do
// (Instance::schedule_running): every position whose due step is at most S.
// In variants for the instruction sets a CPU may have; every variant returns
// the same positions, and the fastest the CPU runs is picked once, at first
// use (as the workload's RNG kernels are).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace blis::due_scan {

// Writes to out, in order, every k in [0, n) with due[k] <= S; returns how
// many (out has room for n). Dues and S are below 2^63 (steps, or 0 for a
// member handled at every step).
using CollectDueFn = size_t (*)(const uint64_t* due, size_t n, uint64_t S, uint32_t* out);

struct Kernel {
  const char* name;  // "portable", "avx2"
  CollectDueFn collect_due;
};

// The variants this CPU can run, the portable C++ one first.
std::span<const Kernel> available();
// The last of available(): the one the engine uses.
const Kernel& best();

}  // namespace blis::due_scan
