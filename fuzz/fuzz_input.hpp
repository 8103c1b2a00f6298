// Shared by the fuzz targets: most readers take a path, so each input is
// written to one scratch file per process (named after the pid, with the
// extension the reader dispatches on) and read back from there.
#pragma once

#include <blis/errors.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

namespace blis_fuzz {

// The scratch file for this process, "<tmp>/blis-fuzz-<pid>-<tag><ext>".
inline std::string scratch_path(const std::string& tag, const std::string& ext) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  return dir + "/blis-fuzz-" + std::to_string(::getpid()) + "-" + tag + ext;
}

// Writes `data` to `path`, replacing what was there.
inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// Runs `read`: a blis::Error is the reader saying no, as it should; any other
// exception reaches main() as an internal failure (exit 1), which bad input
// must never cause, so it stops the fuzzer with the input that caused it.
// BLIS_FUZZ_SHOW_ERRORS=1 prints the refusals (to check that a seed passes).
template <class F>
void expect_only_blis_errors(F&& read) {
  try {
    read();
  } catch (const blis::Error& e) {
    static const bool show = std::getenv("BLIS_FUZZ_SHOW_ERRORS") != nullptr;
    if (show) std::fprintf(stderr, "blis-fuzz: refused: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blis-fuzz: not a blis::Error: %s\n", e.what());
    std::abort();
  }
}

}  // namespace blis_fuzz
