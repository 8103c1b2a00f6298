// `blis plan --search` as a capacity planner meets it: the cheapest deployment over GPUs, TPs,
// batch limits and P/D, its top list and Pareto frontier, the same for every --jobs, and a
// space that cannot be searched refused.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kSearch =
    "plan --search --model qwen/qwen3-14b --rate 20 --slo 'ttft_p99<500ms' --hardware H100 "
    "--tp 1,2 --max-num-seqs 64,256 --search-pd colocated,1:1 --top 3 -q";

// The number after "KEY": in `text` from `from` on.
double number_after(const std::string& text, const std::string& key, size_t from = 0) {
  const size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size() + 4));
}

// The JSON objects of the array KEY, each as its text (one per line, as blis prints them).
std::vector<std::string> rows_of(const std::string& json, const std::string& key) {
  std::vector<std::string> out;
  const size_t at = json.find("\n  \"" + key + "\": [");
  if (at == std::string::npos) return out;
  const size_t end = json.find("\n  ]", at);
  std::istringstream lines(json.substr(at, end - at));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line))
    if (const size_t open = line.find("{\"hardware\""); open != std::string::npos) {
      line = line.substr(open);
      if (line.back() == ',') line.pop_back();  // between the rows
      out.push_back(line);
    }
  return out;
}

}  // namespace

TEST_CASE("plan --search: the cheapest deployment, checked by hand with blis run", "[cli][plan]") {
  const Result r = run_blis(kSearch + " --jobs 2");
  INFO(r.err);
  REQUIRE(r.status == 0);
  // By hand: one H100 at TP 1 saturates at 20 req/s (it starts 17.6 of them per second), so no
  // one-GPU deployment serves the rate; one H100 at TP 2 is steady with a TTFT p99 of 28 ms.
  // Among the 2-GPU deployments (TP 1 x 2, TP 2 x 1, P/D 1P+1D at TP 1) TP 2 serves its users
  // fastest (4.7 ms per token against 9.4 ms).
  const Result one_gpu = run_blis(
      "run --model qwen/qwen3-14b --hardware H100 --tp 1 --max-num-seqs 256 --rate 20 "
      "--num-requests 1200");
  CHECK(one_gpu.err.find("the run is saturated") != std::string::npos);
  const Result two_gpus = run_blis(
      "run --model qwen/qwen3-14b --hardware H100 --tp 2 --max-num-seqs 64 --rate 20 "
      "--num-requests 1200 --format json");
  REQUIRE(two_gpus.status == 0);
  CHECK(two_gpus.err.find("saturated") == std::string::npos);
  CHECK(number_after(two_gpus.out, "ttft_p99_ms") < 500);
  CHECK(r.out.find("best: 1 instance of H100 TP 2, max-num-seqs 64, max-num-batched-tokens 2048, co-located "
                   "(2 GPUs)\n") != std::string::npos);
  CHECK(
      r.out.find("space: hardware H100 x tp 1,2 x max-num-seqs 64,256 x max-num-batched-tokens (run's) x P/D "
                 "co-located,1:1 = 8 settings; cost by GPU count") != std::string::npos);
  CHECK(r.out.find("top 3 (the cheapest verified, by GPUs):") != std::string::npos);
  CHECK(r.out.find("Pareto frontier (tokens/s per GPU against tokens/s per user, verified):") !=
        std::string::npos);
  // A P/D unit is a prefill and a decode instance: its count is written as such.
  CHECK(r.out.find("1P+1D") != std::string::npos);
}

TEST_CASE("plan --search --format json: the best is the first of the top list and on or under the frontier",
          "[cli][plan]") {
  const Result r = run_blis(kSearch + " --jobs 2 --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::vector<std::string> top = rows_of(r.out, "top"), frontier = rows_of(r.out, "frontier");
  const std::vector<std::string> screened = rows_of(r.out, "screened");
  REQUIRE(top.size() == 3);
  REQUIRE(!frontier.empty());
  CHECK(screened.size() == 8);
  const size_t best_at = r.out.find("\n  \"best\": ");
  REQUIRE(best_at != std::string::npos);
  const std::string best = r.out.substr(best_at + 11, r.out.find('\n', best_at + 1) - best_at - 11);
  CHECK(best == top.front());
  // Costs only grow down the list.
  for (size_t i = 1; i < top.size(); ++i)
    CHECK(number_after(top[i - 1], "gpus") <= number_after(top[i], "gpus"));
  // On or under the frontier: some frontier point is at least as good in both.
  const double gpu = number_after(best, "tokens_per_s_per_gpu"),
               user = number_after(best, "tokens_per_s_per_user");
  bool covered = false;
  for (const std::string& f : frontier)
    covered = covered || (number_after(f, "tokens_per_s_per_gpu") >= gpu &&
                          number_after(f, "tokens_per_s_per_user") >= user);
  CHECK(covered);
  // No frontier point dominates another.
  for (const std::string& a : frontier)
    for (const std::string& b : frontier)
      if (&a != &b)
        CHECK_FALSE((number_after(b, "tokens_per_s_per_gpu") >= number_after(a, "tokens_per_s_per_gpu") &&
                     number_after(b, "tokens_per_s_per_user") >= number_after(a, "tokens_per_s_per_user")));
  // The answer carries the configuration blis run reproduces, and what shaped it.
  CHECK(best.find("\"configuration\": \"") != std::string::npos);
  CHECK(r.out.find("\"configurations_screened\": 3072,") != std::string::npos);
  CHECK(r.out.find("\"pd\": [\"co-located\", \"1:1\"]") != std::string::npos);
}

TEST_CASE("plan --search: the same answer, table and report for every --jobs", "[cli][plan]") {
  const blis::test::TempDir dir;
  const std::string a_dir = dir.str() + "/a", b_dir = dir.str() + "/b";
  const Result a = run_blis(kSearch + " --jobs 1 --report " + a_dir);
  const Result b = run_blis(kSearch + " --jobs 2 --report " + b_dir);
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string page = slurp(a_dir + "/report.html");
  CHECK(page == slurp(b_dir + "/report.html"));
  CHECK(page.find("<h2>Deployment search</h2>") != std::string::npos);
  CHECK(page.find("Pareto frontier") != std::string::npos);
  CHECK(slurp(a_dir + "/frontier.svg").find("<svg") != std::string::npos);
}

TEST_CASE("plan --search: with prices, the cheapest by $/hour", "[cli][plan]") {
  // A100-80 at a tenth of H100's price: 4 A100 GPUs ($2.40) beat 2 H100 GPUs ($6.00).
  const Result r = run_blis(
      "plan --search --model qwen/qwen3-14b --rate 20 --slo 'ttft_p99<500ms' --hardware "
      "H100,A100-80 --tp 2 --gpu-cost H100=3,A100-80=0.3 --top 2 --jobs 2 -q");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(std::regex_search(r.out,
                          std::regex("best: [0-9]+ instances? of A100-80 TP 2, .*\\$[0-9.]+/hour\\)\n")));
  CHECK(r.out.find("cost by --gpu-cost ($/hour)") != std::string::npos);
}

TEST_CASE("plan --search: a space that cannot be searched is refused", "[cli][plan]") {
  const std::string base = "plan --model qwen/qwen3-14b --rate 20 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--search --max-rate --num-instances 2", "--max-rate"},
      {"--search --search-pd colocated,1:0", "--search-pd: '1:0': write colocated or PREFILL:DECODE"},
      {"--search --search-pd 1:1,1:1", "'1:1' is listed twice"},
      {"--search --top 0", "--top: must be between 1 and 100"},
      {"--max-num-seqs 64,128", "--max-num-seqs: several values are compared by the deployment search"},
      {"--search-pd 1:1", "--search-pd: lists the P/D units --search tries"},
      {"--top 3", "--top: lists the cheapest configurations of --search"},
      {"--search --prefill-instances 1 --decode-instances 1", "--search chooses the P/D split"},
      {"--search --hardware H100,A100-80 --gpu-cost H100=3", "--gpu-cost: has no price for A100-80"},
      {"--search --max-num-seqs 0", "--max-num-seqs"},
  };
  for (const auto& [flags, error] : cases) check_refused(base + flags, error);
}

TEST_CASE("plan: one --max-num-seqs without --search is the run setting", "[cli][plan]") {
  const Result r = run_blis(
      "plan --model qwen/qwen3-14b --rate 20 --max-num-seqs 64 --slo 'ttft_p99<500ms' --jobs 2 "
      "-q --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\"max_num_running_reqs\": 64,") != std::string::npos);
}
