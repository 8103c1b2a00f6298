// Mid-run events on the KV offload tiers and the encode pool (docs/cli.md
// "Scenario events": `tier`, `pool=NAME instance=K`): a slowed tier raises
// the TTFT of the requests that reload from it by the checked amount, from
// the event on; every writer of events reaches it; a failed encoder's
// requests go to the other encoders or are rejected, as the fail event
// counts them; bad events are one error line naming the event, exit 2.
#include "catch.hpp"
#include "cli.hpp"
#include "json_lite.hpp"
#include "temp_dir.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <string>

using blis::test::Json;
using blis::test::TempDir;

namespace {

// Three clients, each with its own 480-token system prompt, arriving
// together every 3 s: on a GPU cache of 40 blocks only the latest prompt
// stays warm.
const char* const kSpec = R"(version: "2"
seed: 5
category: language
aggregate_rate: 1
num_requests: 9
clients:
  - id: a
    rate_fraction: 1
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 32}}
    output_distribution: {type: constant, params: {value: 2}}
    prefix_group: ga
    prefix_length: 480
  - id: b
    rate_fraction: 1
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 32}}
    output_distribution: {type: constant, params: {value: 2}}
    prefix_group: gb
    prefix_length: 480
  - id: c
    rate_fraction: 1
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 32}}
    output_distribution: {type: constant, params: {value: 2}}
    prefix_group: gc
    prefix_length: 480
)";

// A CPU tier of 41 blocks (2,621,440 bytes each for qwen3-14b) and a SATA
// SSD behind it: 550 bytes per µs read, 150 µs per access.
const char* const kTiers = R"(kv_offload:
  cpu_bytes_to_use: 110000000
  secondary_tiers:
    - type: fs
      root_dir: /mnt/sata
      device_class: sata_ssd
      direct_io: true
)";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Each request's TTFT (µs) in a --results-path file.
std::map<std::string, int64_t> ttfts(const std::string& path) {
  std::map<std::string, int64_t> out;
  const Json doc = Json::parse(slurp(path));
  for (const Json& r : doc["requests"].items)
    out[r["requestID"].text] = static_cast<int64_t>(std::llround(r.num("ttft_ms") * 1000));
  return out;
}

std::string before_events(const std::string& out) {
  return out.substr(0, out.find("=== Scenario Events ==="));
}

const std::string kMulti = std::string("run --model qwen/qwen3-14b --workload-spec ") + BLIS_TEST_SOURCE_DIR +
                           "/examples/epd-multimodal/workload.yaml --routing-policy round-robin "
                           "--prefill-instances 1 --decode-instances 2 --pd-decider always "
                           "--encode-instances 2 --encode-decider always ";

}  // namespace

TEST_CASE("a slowed secondary tier raises the TTFT of a request read back from it by the read's extra time",
          "[golden][offload][events]") {
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                           " --kv-offload-config " + dir.write("o.yaml", kTiers) + " --total-kv-blocks 40";
  auto run = [&](const std::string& events, const std::string& name) {
    const std::string results = dir.str() + "/" + name + ".json";
    const Result r = run_blis(base + events + " --results-path " + results);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return std::make_pair(r.out, ttfts(results));
  };
  const auto [plain_out, plain] = run("", "plain");
  const auto [same_out, same] = run(" --event 'at=0 action=tier tier=1 factor=1'", "same");
  const auto [slow_out, slow] = run(" --event 'at=4s action=tier tier=1 factor=4'", "slow");
  // factor=1 changes nothing but the events block.
  CHECK(before_events(same_out) == before_events(plain_out));
  CHECK(same == plain);
  CHECK(slow_out.find("\n4 s: at=4s action=tier tier=1 factor=4 (1 instance(s))\n") != std::string::npos);
  // Before the event nothing changes. request_3 (client a's second request,
  // at 6 s) finds its 30 prompt blocks only on the disk and waits for their
  // read: 150 µs + 30 x 2,621,440 bytes / 550 bytes per µs = 143,137 µs,
  // four times as long once slowed.
  for (const char* id : {"request_0", "request_1", "request_2"}) CHECK(slow.at(id) == plain.at(id));
  CHECK(slow.at("request_3") - plain.at("request_3") == 3 * 143137);
  // A slowdown that ends before the read changes nothing either.
  const auto [undone_out, undone] =
      run(" --event 'at=1s action=tier tier=1 factor=4' "
          "--event 'at=2s action=tier tier=1 factor=1'",
          "undone");
  CHECK(undone == plain);
}

TEST_CASE("a slowed CPU tier raises each reload by the factor", "[golden][offload][events]") {
  // HEAD's mirror tier: each block reloaded into the GPU adds 1,001 µs (the
  // base latency, and 16 tokens at 100 per µs rounded up) to its step.
  TempDir dir;
  const std::string base = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                           " --total-kv-blocks 40 --kv-cpu-blocks 1000 --kv-cpu-model mirror "
                           "--kv-transfer-base-latency 1000";
  auto run = [&](const std::string& factor) {
    const std::string results = dir.str() + "/r" + factor + ".json";
    const Result r = run_blis(base + " --event 'at=0 action=tier tier=cpu factor=" + factor +
                              "' --results-path " + results);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return ttfts(results);
  };
  const auto one = run("1"), two = run("2"), three = run("3");
  int64_t raised = 0;
  for (const auto& [id, t] : one) {
    INFO(id);
    const int64_t d2 = two.at(id) - t, d3 = three.at(id) - t;
    // Whole reloads of 1,001 µs more each at x2, twice that at x3.
    CHECK(d2 % 1001 == 0);
    CHECK(d3 == 2 * d2);
    raised += d2 > 0 ? 1 : 0;
  }
  CHECK(raised >= 3);
}

TEST_CASE("tier events from TOML, Lua events and Lua code give the same run as --event",
          "[golden][offload][events]") {
  TempDir dir;
  const std::string spec = dir.write("w.yaml", kSpec), tiers = dir.write("o.yaml", kTiers);
  const Result flags =
      run_blis("run --model qwen/qwen3-14b --workload-spec " + spec + " --kv-offload-config " + tiers +
               " --total-kv-blocks 40 --event 'at=4s action=tier tier=1 factor=4 instance=0'");
  REQUIRE(flags.status == 0);
  const std::string toml = dir.write("t.toml", "model = \"qwen/qwen3-14b\"\nworkload_spec = \"" + spec +
                                                   "\"\n\n[kv-cache]\nkv_offload_config = \"" + tiers +
                                                   "\"\ntotal_kv_blocks = 40\n\n[[events]]\nat = \"4s\"\n"
                                                   "action = \"tier\"\ntier = 1\nfactor = 4\ninstance = 0\n");
  // (A table's keys are written in their order: only the event's text differs.)
  const Result t = run_blis("run " + toml + " --trust-scenario");
  INFO(t.err);
  CHECK(before_events(t.out) == before_events(flags.out));
  CHECK(t.out.find("4 s: at=4s action=tier factor=4 instance=0 tier=1\n") != std::string::npos);
  const std::string settings = "model = 'qwen/qwen3-14b', workload_spec = '" + spec +
                               "', kv_offload_config = '" + tiers + "', total_kv_blocks = 40";
  const std::string lua =
      dir.write("t.lua", "return { " + settings +
                             ",\n  events = { { at = '4s', action = 'tier', tier = 1, factor = 4, "
                             "instance = 0 } } }\n");
  const Result l = run_blis("run " + lua + " --trust-scenario");
  INFO(l.err);
  CHECK(before_events(l.out) == before_events(flags.out));
  CHECK(l.out.find("Events Applied: 1\n") != std::string::npos);
  const std::string code =
      dir.write("c.lua", "at(4, function() blis.tier { tier = 1, factor = 4, instance = 0 } end)\nreturn { " +
                             settings + " }\n");
  const Result c = run_blis("run " + code + " --trust-scenario");
  INFO(c.err);
  CHECK(before_events(c.out) == before_events(flags.out));
  CHECK(c.out.find("4 s: action=tier factor=4 instance=0 tier=1\n") != std::string::npos);
}

TEST_CASE("a failed encoder's requests go to the other encoders, or are rejected when none is left",
          "[golden][epd][events]") {
  // One of two encoders fails: nothing is lost (an encode holds no request:
  // it takes no time), the other encodes every request.
  const Result one = run_blis(kMulti + "--event 'at=0 action=fail pool=encode instance=1'");
  INFO(one.err);
  REQUIRE(one.status == 0);
  CHECK(one.out.find("0 s: at=0 action=fail pool=encode instance=1 (0 request(s) re-routed, 0 failed)") !=
        std::string::npos);
  CHECK(one.out.find("Rejected Requests") == std::string::npos);
  CHECK(metric(one.out, "completed_requests") == 200);
  // Both fail at 2 s, one comes back at 3 s: the requests arriving between
  // are rejected at routing, every other one completes. The pool's own
  // indices name the same instances as the cluster's (encoders are 3 and 4).
  const std::string gap =
      "--event 'at=2s action=fail pool=encode instance=0' "
      "--event 'at=2s action=fail pool=encode instance=1 requests=fail' "
      "--event 'at=3s action=restore pool=encode instance=1' --format json";
  const Result both = run_blis(kMulti + gap);
  INFO(both.err);
  REQUIRE(both.status == 0);
  const Json doc = Json::parse(both.out);
  const double rejected = doc.num("rejected_requests"), completed = doc["cluster"].num("completed_requests");
  CHECK(rejected > 0);
  CHECK(completed + rejected == 200);
  CHECK(doc["scenario_events"].num("failed") == 0);
  CHECK(doc["scenario_events"].num("rerouted") == 0);
  const Result global = run_blis(kMulti +
                                 "--event 'at=2s action=fail instance=3' "
                                 "--event 'at=2s action=fail instance=4 requests=fail' "
                                 "--event 'at=3s action=restore instance=4' --format json");
  const Json g = Json::parse(global.out);
  CHECK(g.num("rejected_requests") == rejected);
  CHECK(g["cluster"].num("completed_requests") == completed);
}

TEST_CASE("bad tier and encoder events are one error line naming the event, exit 2",
          "[golden][offload][events]") {
  TempDir dir;
  const std::string offload = "run --model qwen/qwen3-14b --workload-spec " + dir.write("w.yaml", kSpec) +
                              " --kv-offload-config " + dir.write("o.yaml", kTiers) +
                              " --total-kv-blocks 400 ";
  auto refused = [](const std::string& args, const std::string& message) {
    const Result r = check_refused(args, message);
    size_t lines = 0;
    for (size_t at = r.err.find("blis: error: "); at != std::string::npos;
         at = r.err.find("blis: error: ", at + 1))
      ++lines;
    CHECK(lines == 1);
  };
  refused(offload + "--event 'at=1s action=tier tier=3 factor=2'",
          "blis: error: --event: event 'at=1s action=tier tier=3 factor=2': tier 3: no instance has it; "
          "instance 0 "
          "has 1 secondary tier(s) in --kv-offload-config (tier=1..1)");
  refused(offload + "--event 'at=1s action=tier tier=nvme factor=2'", "tier=nvme is not a tier");
  refused(offload + "--event 'at=1s action=tier tier=1 factor=0'",
          "factor=0 is not a slowdown in [0.001, 1000]");
  refused(offload + "--event 'at=1s action=tier tier=1 factor=-3'", "factor=-3 is not a slowdown");
  refused(offload + "--event 'at=1s action=tier tier=cpu factor=2'", "without a transfer time");
  refused("run --model qwen/qwen3-14b --num-instances 2 --event 'at=1s action=tier tier=cpu factor=2'",
          "has no KV offload tier");
  refused(kMulti + "--event 'at=1s action=fail pool=encode instance=2'",
          "blis: error: --event: event 'at=1s action=fail pool=encode instance=2': pool 'encode' has 2 "
          "instance(s); "
          "instance=2 is not one of them");
  refused(kMulti + "--event 'at=1s action=restore pool=encoders instance=0'",
          "no pool 'encoders'; pools are prefill, decode, encode");
  const std::string toml = dir.write("bad.toml",
                                     "model = \"qwen/qwen3-14b\"\n[[events]]\nat = \"1s\"\n"
                                     "action = \"tier\"\ntier = \"cpu\"\nfactor = 0\n");
  refused("run " + toml, "factor=0 is not a slowdown");
}
