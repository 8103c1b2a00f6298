// Hostile inputs (issue 13): each one ends blis quickly with exit 2 and one
// `blis: error:` line that says what is wrong and where, instead of a crash,
// a hang or memory exhaustion.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <chrono>
#include <string>

namespace {

const std::string kRun = "run --model qwen/qwen3-14b ";

// Runs blis; the run must end within `seconds` (generous: the machine running
// the suite may be busy; the failures it guards against took minutes).
Result run_quickly(const std::string& args, double seconds = 5) {
  const auto start = std::chrono::steady_clock::now();
  Result r = run_blis(args, "", "timeout -s KILL 60");
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  CHECK(took.count() < seconds);
  return r;
}

// Exit 2 and exactly one line on stderr, holding `text`.
void check_one_error(const Result& r, const std::string& text) {
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(text) != std::string::npos);
  CHECK(r.err.rfind("blis: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  INFO(r.err);
}

}  // namespace

TEST_CASE("robustness: a YAML merge key that includes its own mapping is an error", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("self.yaml", "&a {<<: *a}\n");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "self.yaml:1: a merge key (<<) under the top level "
                                                                  "merges a mapping that contains it");
  check_one_error(run_quickly(kRun + "--workload-spec " + file), "self.yaml:1:1: a merge key (<<)");
}

TEST_CASE("robustness: chained YAML merge keys are bounded, not exponential", "[cli][workload]") {
  // Each level merges the previous one twice: 2^25 merged mappings.
  std::string chain = "&b0 {scheduler: fcfs}";
  for (int k = 1; k <= 25; ++k)
    chain = "&b" + std::to_string(k) + " {<<: [" + chain + ", *b" + std::to_string(k - 1) + "]}";
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("chain.yaml", "<<: " + chain + "\n");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "chain.yaml:1: merge keys (<<) under the top level "
                                                                  "expand to more than 1000 merged mappings");
  // Legitimate nesting still merges: the nested value is read (and checked).
  CHECK(run_quickly(kRun + "--num-requests 2 --policy-config " + dir.write("ok.yaml", "<<: &b {<<: &a {scheduler: sjf}}\n"))
            .status == 0);
  check_one_error(run_quickly(kRun + "--policy-config " + dir.write("bad.yaml", "<<: &b {<<: &a {scheduler: nope}}\n")),
                  "nope");
}

TEST_CASE("robustness: a YAML file holding only a comma is an error", "[cli][workload]") {
  blis::test::TempDir dir("blis-robust");
  const std::string file = dir.write("comma.yaml", ",");
  check_one_error(run_quickly(kRun + "--workload-spec " + file), "comma.yaml:1:1: unexpected ','");
  check_one_error(run_quickly(kRun + "--policy-config " + file), "comma.yaml:1: unexpected ','");
  // An empty file is still "no document", a lone "---" an empty one.
  check_one_error(run_quickly(kRun + "--workload-spec " + dir.write("empty.yaml", "# nothing\n")),
                  "empty workload spec (no YAML document)");
  CHECK(run_quickly(kRun + "--policy-config " + dir.write("dashes.yaml", "---\n") + " --num-requests 2").status == 0);
}
