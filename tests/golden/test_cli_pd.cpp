// Prefill/decode disaggregation from the command line (docs/disaggregation.md):
// the flags, the PD block, and the settings refused with a reason.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --rate 10 --num-requests 60";

}  // namespace

TEST_CASE("P/D flags are in --help", "[golden][pd]") {
  const Result r = run_blis("run --help");
  for (const char* flag : {"--prefill-instances", "--decode-instances", "--prefill-decode-instances", "--pd-decider",
                           "--pd-prefix-threshold", "--pd-transfer-bandwidth", "--pd-transfer-base-latency",
                           "--pd-transfer-contention", "--prefill-routing-scorers", "--decode-routing-scorers",
                           "--prefill-tp", "--decode-tp", "--prefill-hardware", "--decode-hardware",
                           "--prefill-latency-model", "--decode-latency-model", "--prefill-max-model-len",
                           "--decode-max-model-len"})
    CHECK(r.out.find(flag) != std::string::npos);
  CHECK(r.out.find("P/D clusters too") != std::string::npos);  // --event
  CHECK(r.out.find("role=prefill|decode|mixed for P/D pools") != std::string::npos);  // --pool
}

TEST_CASE("a P/D run prints its pools and the PD block, a run without P/D neither", "[golden][pd]") {
  const Result pd = run_blis(kBase + " --prefill-instances 1 --decode-instances 2 --pd-decider always "
                                     "--pd-transfer-contention --decode-tp 2");
  INFO(pd.err);
  REQUIRE(pd.status == 0);
  CHECK(pd.out.find("\nprefill: 1 instance(s) of qwen/qwen3-14b on H100 (TP 1)") != std::string::npos);
  CHECK(pd.out.find("\ndecode: 2 instance(s) of qwen/qwen3-14b on H100 (TP 2)") != std::string::npos);
  CHECK(pd.out.find("=== PD Metrics ===\nDisaggregated Requests: 60\nKV Transfers: 60\nDropped at Decode KV: 0\n"
                    "Still in KV Transfer: 0\n") != std::string::npos);
  CHECK(pd.out.find("\nPeak Concurrent Transfers: ") != std::string::npos);
  CHECK(pd.out.find("\nMean Transfer Queue Depth: ") != std::string::npos);
  CHECK(metric(pd.out, "completed_requests") == 60);
  // Deterministic.
  CHECK(run_blis(kBase + " --prefill-instances 1 --decode-instances 2 --pd-decider always "
                         "--pd-transfer-contention --decode-tp 2").out == pd.out);
  const Result plain = run_blis(kBase + " --num-instances 3");
  CHECK(plain.out.find("=== PD Metrics ===") == std::string::npos);
  // never: the decode pool serves everything, the block says so.
  const Result never = run_blis(kBase + " --prefill-decode-instances 2");
  REQUIRE(never.status == 0);
  CHECK(never.out.find("Disaggregated Requests: 0\n") != std::string::npos);
}

TEST_CASE("a P/D run's --dump-config runs again with the same result", "[golden][pd]") {
  blis::test::TempDir dir;
  const std::string flags = kBase + " --prefill-instances 1 --decode-instances 2 --pd-decider always";
  const Result dump = run_blis(flags + " --dump-config");
  REQUIRE(dump.status == 0);
  CHECK(dump.out.find("num_instances = 3\n") != std::string::npos);
  const std::string path = dir.write("pd.toml", dump.out);
  const Result again = run_blis("run '" + path + "' --trust-scenario");
  INFO(again.err);
  REQUIRE(again.status == 0);
  CHECK(again.out == run_blis(flags).out);
}

TEST_CASE("P/D: the JSON format carries the PD figures under its pd member", "[golden][pd]") {
  const Result r = run_blis(kBase + " --prefill-instances 1 --decode-instances 1 --pd-decider always --format json");
  REQUIRE(r.status == 0);
  CHECK(r.out.find(",\n  \"pd\": {\n    \"disaggregated_requests\": 60,\n    \"kv_transfers\": 60,\n") !=
        std::string::npos);
  CHECK(r.out.find("\"load_imbalance_ratio\": 1,\n") != std::string::npos);
  CHECK(r.out.find("\"kv_transfer_us\": {\"mean\": ") != std::string::npos);
  CHECK(r.out.substr(r.out.size() - 6) == "  }\n}\n");
  CHECK(run_blis(kBase + " --format json").out.find("\"pd\"") == std::string::npos);
}

TEST_CASE("P/D settings that cannot work are refused with the reason", "[golden][pd]") {
  // docs/differences.md: the reference leaves instances beyond the pools idle.
  check_refused(kBase + " --num-instances 4 --prefill-instances 1 --decode-instances 2",
                "--num-instances: 4 instance(s), but the P/D pools have 3");
  check_refused(kBase + " --prefill-instances 2", "both need at least one");
  check_refused(kBase + " --pd-decider always", "--pd-decider: needs P/D pools");
  check_refused(kBase + " --pd-transfer-contention", "--pd-transfer-contention: needs P/D pools");
  check_refused(kBase + " --decode-tp 2", "--decode-tp: needs P/D pools");
  check_refused(kBase + " --pd-decider sometimes", "unknown P/D decider 'sometimes'");
  check_refused(kBase + " --prefill-instances 1 --decode-instances 1 --pd-transfer-bandwidth 0", "must be a finite value > 0");
  check_refused(kBase + " --prefill-instances 1 --decode-instances 1 --pd-transfer-base-latency -1", "[0, 1e9]");
  check_refused(kBase + " --prefill-instances 1 --decode-instances 1 --pool 'name=a count=1'", "cannot be combined");
  check_refused(kBase + " --prefill-instances 1 --decode-instances 1 --decode-routing-scorers nope:1",
                "unknown scorer 'nope'");
}

TEST_CASE("P/D with scenario events: a decode instance failing at peak, add and remove by pool", "[golden][pd][events]") {
  const std::string pd = kBase + " --prefill-instances 1 --decode-instances 2 --pd-decider always";
  const Result base = run_blis(pd);
  REQUIRE(base.status == 0);
  // (Round-robin takes turns over the decode and the prefill routing: with
  // one prefill instance, every request is decoded on instance 1.)
  const Result r = run_blis(pd + " --event 'at=2s action=fail instance=1 requests=reroute'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Every request there had tokens out: failed even when re-routing.
  CHECK(r.out.find("2 s: at=2s action=fail instance=1 requests=reroute (0 request(s) re-routed, 17 failed)\n"
                   "Events Applied: 1\nRerouted Requests: 0\nFailed Requests: 17\n") != std::string::npos);
  CHECK(metric(r.out, "completed_requests") == 60 - 17);
  CHECK(r.out != base.out);
  // Earlier, while the requests on the wire and queued have no token yet: re-routed.
  const Result early = run_blis(pd + " --pd-transfer-bandwidth 0.05 --event 'at=1s action=fail instance=1 requests=reroute'");
  INFO(early.err);
  REQUIRE(early.status == 0);
  CHECK(early.out.find("Rerouted Requests: 0\n") == std::string::npos);
  // add and remove name a P/D pool.
  const Result add = run_blis(pd + " --event 'at=1s action=add count=1 pool=decode' "
                                   "--event 'at=3s action=remove count=1 pool=decode drain=wait'");
  INFO(add.err);
  REQUIRE(add.status == 0);
  CHECK(add.out.find("=== PD Metrics ===") != std::string::npos);
  CHECK(metric(add.out, "completed_requests") == 60);
  check_refused(pd + " --event 'at=1s action=add count=1'", "the cluster has 2 pools; name one with pool=NAME");
}

TEST_CASE("P/D pools as --pool entries with role keys print what the P/D flags print", "[golden][pd][pools]") {
  const std::string run = kBase + " --pd-decider always";
  // The same cluster in both spellings: byte-identical stdout.
  CHECK(run_blis(run + " --pool 'name=prefill count=1 role=prefill' --pool 'name=decode count=2 role=decode'").out ==
        run_blis(run + " --prefill-instances 1 --decode-instances 2").out);
  CHECK(run_blis(run + " --pool 'name=prefill count=1 role=prefill' "
                       "--pool 'name=decode count=2 role=decode tp=2 hardware=A100-80'").out ==
        run_blis(run + " --prefill-instances 1 --decode-instances 2 --decode-tp 2 --decode-hardware A100-80").out);
  const std::string threshold = kBase + " --pd-decider prefix-threshold";
  CHECK(run_blis(threshold + " --pool 'name=prefill count=1 role=prefill' --pool 'name=decode count=1 role=decode' "
                             "--pool 'name=prefill-decode count=2 role=mixed'").out ==
        run_blis(threshold + " --prefill-instances 1 --decode-instances 1 --prefill-decode-instances 2").out);
  // A prefill pool of H100s and a decode pool of A100s, each with its cost.
  const Result r = run_blis(run + " --pool 'name=p count=2 role=prefill hardware=H100 cost_per_hour=4' "
                                  "--pool 'name=d count=3 role=decode hardware=A100-80 tp=2 cost_per_hour=2.5'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\np: 2 instance(s) of qwen/qwen3-14b on H100 (TP 1), latency model roofline; 0 completed; ") !=
        std::string::npos);
  CHECK(r.out.find("\nd: 3 instance(s) of qwen/qwen3-14b on A100-80 (TP 2), latency model roofline; 60 completed; ") !=
        std::string::npos);
  CHECK(r.out.find("=== PD Metrics ===\nDisaggregated Requests: 60\n") != std::string::npos);
  CHECK(r.out.find("; no price\n") == std::string::npos);  // every pool is billed
  // With an event naming a role pool.
  const Result ev = run_blis(run + " --pool 'name=p count=1 role=prefill' --pool 'name=d count=1 role=decode' "
                                   "--event 'at=1s action=add count=1 pool=d'");
  INFO(ev.err);
  REQUIRE(ev.status == 0);
  CHECK(metric(ev.out, "completed_requests") == 60);
}

TEST_CASE("P/D pools in a TOML scenario's [[pools]] tables", "[golden][pd][pools]") {
  blis::test::TempDir dir;
  const std::string path = dir.write("pd.toml", "model = \"qwen/qwen3-14b\"\nrate = 10\nnum_requests = 60\n"
                                                "pd_decider = \"always\"\n\n[[pools]]\nname = \"prefill\"\ncount = 1\n"
                                                "role = \"prefill\"\n\n[[pools]]\nname = \"decode\"\ncount = 2\n"
                                                "role = \"decode\"\n");
  const Result r = run_blis("run '" + path + "' --trust-scenario");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string flags = run_blis(kBase + " --pd-decider always --prefill-instances 1 --decode-instances 2").out;
  CHECK(r.out == flags);
  // In Lua, as tables; and --dump-config of role pools runs again the same.
  const std::string lua = dir.write("pd.lua", "return { model = \"qwen/qwen3-14b\", rate = 10, num_requests = 60, "
                                              "pd_decider = \"always\", pools = { { name = \"prefill\", count = 1, "
                                              "role = \"prefill\" }, { name = \"decode\", count = 2, role = "
                                              "\"decode\" } } }\n");
  CHECK(run_blis("run '" + lua + "' --trust-scenario").out == flags);
  const Result dump = run_blis(kBase + " --pd-decider always --pool 'name=prefill count=1 role=prefill' "
                                       "--pool 'name=decode count=2 role=decode' --dump-config");
  REQUIRE(dump.status == 0);
  CHECK(dump.out.find("\n[[pools]]\nname = \"decode\"\ncount = 2\nrole = \"decode\"\n") != std::string::npos);
  const std::string again = dir.write("again.toml", dump.out);
  CHECK(run_blis("run '" + again + "' --trust-scenario").out == flags);
}

TEST_CASE("P/D pools with role keys that cannot work are refused with the reason", "[golden][pd][pools]") {
  const std::string run = kBase + " --pd-decider always";
  check_refused(run + " --pool 'name=x count=1 role=prefill' --pool 'name=y count=1'",
                "pool 'name=y count=1': the other pools have a P/D role, so this one needs role=prefill");
  check_refused(run + " --pool 'name=x count=2 role=prefill'",
                "P/D pools of 2 prefill and 0 decode instance(s): both need at least one (role=mixed counts for both)");
  check_refused(run + " --pool 'name=x count=1 role=both'", "role=both is not a P/D role: prefill, decode or mixed");
  check_refused(run + " --pool 'name=x count=1 role=prefill' --pool 'name=y count=1 role=decode' --decode-tp 2",
                "--decode-tp: the P/D pools are --pool entries: give the pool's own key");
  check_refused(run + " --prefill-instances 1 --decode-instances 1 --pool 'name=x count=1 role=decode'",
                "cannot be combined; give the P/D pools as --pool entries with role=prefill|decode|mixed instead");
}

TEST_CASE("P/D with an autoscaler: the decode and the prefill pools scale apart", "[golden][pd][autoscaling]") {
  const std::string run = "run --model qwen/qwen3-14b --rate 40 --num-requests 2000 --pd-decider always "
                          "--lifecycle 'provisioning_delay=5s min=1 max=6' --autoscaler 'interval=2s'";
  const Result r = run_blis(run + " --prefill-instances 1 --decode-instances 1");
  INFO(r.err);
  REQUIRE(r.status == 0);
  // One scaling group per role: the decode pool grows, though the prefill
  // pool comes first and costs the same (one group would grow that).
  CHECK(r.out.find("10 s: decode +1 (KV demand ") != std::string::npos);
  CHECK(r.out.find(": prefill +") == std::string::npos);
  CHECK(r.out.find("\ndecode: 1 instance(s) at start, 1 at end, peak 3 (2 added, 2 removed) of qwen/qwen3-14b on H100 "
                   "(TP 1), latency model roofline; ") != std::string::npos);
  CHECK(r.out.find("=== PD Metrics ===\nDisaggregated Requests: 2000\n") != std::string::npos);
  // The same as role pools, with their cost.
  CHECK(run_blis(run + " --pool 'name=prefill count=1 role=prefill' --pool 'name=decode count=1 role=decode'").out ==
        r.out);
  const Result cost = run_blis(run + " --pool 'name=p count=1 role=prefill cost_per_hour=4' "
                                     "--pool 'name=d count=1 role=decode hardware=A100-80 cost_per_hour=2'");
  INFO(cost.err);
  REQUIRE(cost.status == 0);
  CHECK(cost.out.find(": d +1 (KV demand ") != std::string::npos);
  CHECK(cost.out.find("; no price\n") == std::string::npos);
}
