// Every example under examples/ runs and prints exactly its expected output.
#include "catch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

std::string run(const std::string& args) {
  const std::string cmd = std::string("cd ") + BLIS_TEST_SOURCE_DIR + " && " + BLIS_TEST_STAGE +
                          "/bin/blis " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

std::string read(const std::string& path) {
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/" + path);
  REQUIRE(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("example: trace-replay", "[golden][examples]") {
  std::string out = run("run --model qwen/qwen3-14b --workload-trace examples/trace-replay/trace.csv");
  CHECK(out == read("examples/trace-replay/expected.txt"));
  CHECK(out.find("=== Per-SLO Metrics ===") != std::string::npos);
  CHECK(out.find("Cache Hit Rate: ") != std::string::npos);
}
