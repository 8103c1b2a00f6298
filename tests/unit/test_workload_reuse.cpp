// Workload reuse in sweeps, searches and plans (run/workload_reuse.hpp,
// issue 31 item 7): a replayed workload is the generated one, request for
// request, and a sweep that replays prints what each configuration prints
// alone.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include "run/resolve.hpp"
#include "run/workload_reuse.hpp"

#include <blis/settings.hpp>

#include <cstdlib>
#include <string>
#include <vector>

using blis::test::TempDir;

namespace {

using namespace blis;

void use_stage() {
  setenv("BLIS_DATA_DIR", (std::string(BLIS_TEST_STAGE) + "/share/blis/data").c_str(), 0);
  setenv("BLIS_PLUGIN_PATH", (std::string(BLIS_TEST_STAGE) + "/lib/blis/plugins").c_str(), 0);
}

// A run resolved from `flags` (flag, value pairs).
ResolvedRun resolved(const std::vector<std::pair<std::string, std::string>>& flags, RunContext*& keep) {
  Settings s;
  for (const auto& [flag, value] : flags) s.push_back(Setting{flag, value, "--" + flag, {}});
  const RunConfig c = build_config({&s});
  static std::vector<std::unique_ptr<RunContext>> contexts;  // the generators' plugins outlive the test
  contexts.push_back(std::make_unique<RunContext>(RunContext::open(c)));
  keep = contexts.back().get();
  return resolve(c, *keep);
}

std::vector<WorkloadRequest> drain(WorkloadSource& w) {
  std::vector<WorkloadRequest> out;
  WorkloadRequest r;
  while (w.next(r)) out.push_back(r);
  return out;
}

void check_same(const std::vector<WorkloadRequest>& a, const std::vector<WorkloadRequest>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("request " << i);
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].arrival_us == b[i].arrival_us);
    CHECK(a[i].input_tokens == b[i].input_tokens);
    CHECK(a[i].output_tokens == b[i].output_tokens);
    CHECK(a[i].max_output_tokens == b[i].max_output_tokens);
    CHECK(a[i].slo_class == b[i].slo_class);
    CHECK(a[i].deadline_us == b[i].deadline_us);
    CHECK(a[i].user == b[i].user);
    CHECK(a[i].round == b[i].round);
    CHECK(a[i].session == b[i].session);
    CHECK(a[i].tenant_id == b[i].tenant_id);
    CHECK(a[i].model == b[i].model);
    CHECK(a[i].adapter == b[i].adapter);
    CHECK(a[i].block_hashes == b[i].block_hashes);
    CHECK(a[i].own_content == b[i].own_content);
    CHECK(a[i].shareable_blocks == b[i].shareable_blocks);
    CHECK(a[i].source == b[i].source);
    CHECK(a[i].slo_target_us == b[i].slo_target_us);
  }
}

}  // namespace

TEST_CASE("workload reuse: a replayed workload is the generated one, request for request", "[workload]") {
  use_stage();
  // A shared prefix (block hashes), deadlines, Poisson arrivals.
  const std::vector<std::pair<std::string, std::string>> flags{{"model", "qwen/qwen3-14b"},
                                                               {"rate", "50"},
                                                               {"num-requests", "300"},
                                                               {"prefix-tokens", "256"},
                                                               {"timeout", "20"},
                                                               {"arrival-process", "poisson"},
                                                               {"seed", "7"}};
  RunContext* ctx = nullptr;
  const ResolvedRun r = resolved(flags, ctx);
  const std::vector<WorkloadRequest> fresh = drain(*make_workload(r));
  REQUIRE(fresh.size() == 300);
  CHECK(!fresh.back().block_hashes.empty());
  CHECK(fresh.back().deadline_us > 0);

  const WorkloadReuseCounts before = workload_reuse_counts();
  {
    const WorkloadReuse reuse;
    check_same(drain(*reusable_workload(r, {}, false)), fresh);  // generated and kept
    check_same(drain(*reusable_workload(r, {}, false)), fresh);  // replayed
  }
  const WorkloadReuseCounts after = workload_reuse_counts();
  CHECK(after.generated == before.generated + 1);
  CHECK(after.replayed == before.replayed + 1);
  // Closed, the reuse keeps nothing: the workload is generated as usual.
  check_same(drain(*reusable_workload(r, {}, false)), fresh);
  CHECK(workload_reuse_counts().generated == after.generated);
}

TEST_CASE("workload reuse: the key follows the workload's inputs and nothing else", "[workload]") {
  use_stage();
  RunContext* ctx = nullptr;
  auto key = [&](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> flags{
        {"model", "qwen/qwen3-14b"}, {"rate", "20"}, {"num-requests", "100"}};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return workload_reuse_key(resolved(flags, ctx), {}, false);
  };
  const std::string base = key({});
  REQUIRE(!base.empty());
  // The fleet does not change the requests.
  CHECK(key({{"num-instances", "8"}}) == base);
  CHECK(key({{"routing-policy", "least-loaded"}, {"max-num-seqs", "64"}}) == base);
  // Every input of the generator does.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"seed", "43"},
                                                        {"rate", "20.5"},
                                                        {"num-requests", "101"},
                                                        {"prompt-tokens", "500"},
                                                        {"output-tokens-max", "6000"},
                                                        {"prefix-tokens", "16"},
                                                        {"timeout", "30"},
                                                        {"horizon", "10000000"},
                                                        {"block-size-in-tokens", "32"},
                                                        {"arrival-process", "poisson"},
                                                        {"workload", "chatbot"}}) {
    INFO(flag << " " << value);
    std::vector<std::pair<std::string, std::string>> extra{{flag, value}};
    if (flag == "rate" || flag == "num-requests") {
      std::vector<std::pair<std::string, std::string>> flags{
          {"model", "qwen/qwen3-14b"},
          {"rate", flag == "rate" ? value : "20"},
          {"num-requests", flag == "num-requests" ? value : "100"}};
      CHECK(workload_reuse_key(resolved(flags, ctx), {}, false) != base);
      continue;
    }
    CHECK(key(extra) != base);
  }
  // Not kept: closed-loop users, scenario code, more requests than kept.
  CHECK(workload_reuse_key(
            resolved({{"model", "qwen/qwen3-14b"}, {"concurrency", "4"}, {"num-requests", "100"}}, ctx), {},
            false)
            .empty());
  CHECK(workload_reuse_key(resolved({{"model", "qwen/qwen3-14b"}, {"rate", "20"}}, ctx), {}, true).empty());
  CHECK(
      workload_reuse_key(
          resolved({{"model", "qwen/qwen3-14b"}, {"rate", "20"}, {"num-requests", "300000"}}, ctx), {}, false)
          .empty());
}

TEST_CASE("workload reuse: a sweep over the fleet prints each configuration's row as it runs alone",
          "[workload]") {
  TempDir dir("blis-reuse");
  const std::string head = "model = \"qwen/qwen3-14b\"\nrate = 30\nnum-requests = 200\nprefix-tokens = 128\n";
  const std::string sweep = dir.write(
      "sweep.toml",
      head + "[sweep]\nnum-instances = [1, 2, 3]\nrouting-policy = [\"round-robin\", \"least-loaded\"]\n");
  const Result all = run_blis("run " + sweep + " --jobs 1");
  REQUIRE(all.status == 0);
  const Result parallel = run_blis("run " + sweep + " --jobs 2");
  REQUIRE(parallel.status == 0);
  CHECK(parallel.out == all.out);
  // Each configuration alone (a sweep of one generates its workload itself).
  for (const char* n : {"1", "2", "3"})
    for (const char* policy : {"round-robin", "least-loaded"}) {
      const std::string one = dir.write(
          "one.toml", head + "[[sweep]]\nnum-instances = " + n + "\nrouting-policy = \"" + policy + "\"\n");
      const Result alone = run_blis("run " + one + " --jobs 1");
      REQUIRE(alone.status == 0);
      const size_t at = alone.out.find("{\"num_instances\"");
      REQUIRE(at != std::string::npos);
      const std::string row = alone.out.substr(at, alone.out.find('\n', at) - at);
      INFO(row);
      CHECK(all.out.find(row) != std::string::npos);
    }
}
