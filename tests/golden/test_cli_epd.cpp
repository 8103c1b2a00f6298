// Encoder disaggregation and expert parallelism from the command line
// (docs/epd.md): the flags, their scenario keys, what the encode pool
// changes, and the settings refused with a reason.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

namespace {

const std::string kMulti = std::string("run --model qwen/qwen3-14b --workload-spec ") + BLIS_TEST_SOURCE_DIR +
                           "/examples/epd-multimodal/workload.yaml --routing-policy round-robin ";
const std::string kPools = "--prefill-instances 1 --decode-instances 2 --pd-decider always ";
const std::string kMoe =
    "run --model qwen/qwen3-30b-a3b --hardware H100 --latency-model trained-physics --rate 20 --num-requests 60 ";

// The decode instances' completions, "instance_1=a instance_2=b".
std::string decode_split(const std::string& out) {
  return "instance_1=" + std::to_string(static_cast<int64_t>(metric(out, "completed_requests", "instance_1"))) +
         " instance_2=" + std::to_string(static_cast<int64_t>(metric(out, "completed_requests", "instance_2")));
}

}  // namespace

TEST_CASE("E/P/D and expert-parallel flags are in --help", "[golden][epd]") {
  const Result r = run_blis("run --help");
  for (const char* flag : {"--encode-instances", "--encode-decider", "--enable-expert-parallel", "--dp"})
    CHECK(r.out.find(flag) != std::string::npos);
}

TEST_CASE("the encode pool moves the router as HEAD's does, and serves nothing", "[golden][epd]") {
  const std::string flags = kMulti + kPools + "--encode-instances 1 --profile-set head --encode-decider ";
  const Result never = run_blis(flags + "never");
  const Result multimodal = run_blis(flags + "multimodal");
  const Result always = run_blis(flags + "always");
  INFO(always.err);
  REQUIRE(never.status == 0);
  REQUIRE(multimodal.status == 0);
  REQUIRE(always.status == 0);
  // never warns that the pool gets nothing, and runs as without the pool.
  CHECK(never.err.find("--encode-decider never") != std::string::npos);
  // Every request is completed whichever the decider; the encode instance
  // (instance_3) serves none.
  for (const Result* r : {&never, &multimodal, &always}) {
    CHECK(metric(r->out, "completed_requests") == 200);
    CHECK(metric(r->out, "completed_requests", "instance_3") == 0);
  }
  // Round-robin over one counter: a request's decode choice and its prefill
  // choice take two turns, so the decode choice always lands on the same
  // decode instance, unless an encode choice takes a third turn. HEAD
  // (f90a1e3a) prints the same splits.
  CHECK(decode_split(never.out) == "instance_1=200 instance_2=0");
  CHECK(decode_split(always.out) == "instance_1=100 instance_2=100");
  CHECK(decode_split(multimodal.out) == "instance_1=94 instance_2=106");
}

TEST_CASE("E/P/D and expert parallelism reach the run from TOML, Lua and --dump-config", "[golden][epd]") {
  blis::test::TempDir dir;
  const std::string flags = kMulti + kPools + "--encode-instances 1 --encode-decider multimodal";
  const Result cli = run_blis(flags);
  REQUIRE(cli.status == 0);
  const Result dump = run_blis(flags + " --dump-config");
  REQUIRE(dump.status == 0);
  CHECK(dump.out.find("encode_instances = 1\n") != std::string::npos);
  CHECK(dump.out.find("encode_decider = \"multimodal\"\n") != std::string::npos);
  CHECK(dump.out.find("num_instances = 4\n") != std::string::npos);
  const Result again = run_blis("run '" + dir.write("epd.toml", dump.out) + "' --trust-scenario");
  INFO(again.err);
  CHECK(again.out == cli.out);
  const std::string lua = dir.write("epd.lua", std::string("return { model = 'qwen/qwen3-14b', workload_spec = '") +
                                                   BLIS_TEST_SOURCE_DIR + "/examples/epd-multimodal/workload.yaml',\n"
                                                   "  routing_policy = 'round-robin', prefill_instances = 1,\n"
                                                   "  decode_instances = 2, pd_decider = 'always',\n"
                                                   "  encode_instances = 1, encode_decider = 'multimodal' }\n");
  const Result from_lua = run_blis("run '" + lua + "' --trust-scenario");
  INFO(from_lua.err);
  CHECK(from_lua.out == cli.out);

  const Result ep = run_blis(kMoe + "--tp 2 --dp 2 --enable-expert-parallel");
  INFO(ep.err);
  REQUIRE(ep.status == 0);
  const Result ep_dump = run_blis(kMoe + "--tp 2 --dp 2 --enable-expert-parallel --dump-config");
  CHECK(ep_dump.out.find("enable_expert_parallel = true\n") != std::string::npos);
  CHECK(run_blis("run '" + dir.write("ep.toml", ep_dump.out) + "' --trust-scenario").out == ep.out);
}

TEST_CASE("expert parallelism changes no step time of trained-physics, as in HEAD", "[golden][epd]") {
  const Result ep = run_blis(kMoe + "--tp 2 --dp 2 --enable-expert-parallel");
  const Result off = run_blis(kMoe + "--tp 2 --dp 2");
  INFO(ep.err);
  REQUIRE(ep.status == 0);
  CHECK(ep.out == off.out);
}

TEST_CASE("with no encode instance taking traffic, the requests to encode are rejected at routing",
          "[golden][epd]") {
  // docs/differences.md row 42: HEAD counts them on a line of their own.
  const Result r = run_blis(kMulti + kPools + "--encode-instances 1 --encode-decider always "
                                              "--event 'at=0 action=fail instance=3'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("Rejected Requests: 200\n") != std::string::npos);
  CHECK(r.out.find("\nencode: 1 instance(s) of qwen/qwen3-14b") != std::string::npos);
  const Result head = run_blis(kMulti + kPools + "--encode-instances 1 --encode-decider always --profile-set head "
                                                 "--event 'at=0 action=fail instance=3'");
  CHECK(metric(head.out, "completed_requests") == 0);
  CHECK(head.out.find("Rejected Requests (Routing): 200") != std::string::npos);
}

TEST_CASE("E/P/D and expert-parallel settings that cannot work are refused with the reason", "[golden][epd]") {
  check_refused(kMulti + "--encode-decider multimodal", "--encode-decider: multimodal needs an encode pool");
  check_refused(kMulti + kPools + "--encode-decider always", "needs an encode pool");
  check_refused(kMulti + "--encode-instances 1 --encode-decider always", "--encode-instances: the encode pool needs "
                                                                         "P/D pools");
  check_refused(kMulti + kPools + "--encode-instances 1 --num-instances 3",
                "--num-instances: 3 instance(s), but the P/D pools have 4 (1 prefill + 2 decode + 0 "
                "prefill-decode + 1 encode)");
  check_refused(kMulti + kPools + "--encode-instances 1 --encode-decider sometimes", "--encode-decider");
  check_refused(kMulti + kPools + "--encode-instances -1", "--encode-instances");
  // HEAD refuses expert parallelism on a dense model and on latency models
  // other than trained-physics (cmd/root.go).
  check_refused("run --model qwen/qwen3-14b --latency-model trained-physics --enable-expert-parallel",
                "--enable-expert-parallel");
  check_refused("run --model qwen/qwen3-14b --latency-model trained-physics --enable-expert-parallel",
                "needs a MoE model");
  check_refused("run --model qwen/qwen3-30b-a3b --hardware H100 --tp 1 --latency-model roofline "
                "--enable-expert-parallel",
                "the roofline latency model does not read 'enable_expert_parallel'");
}

TEST_CASE("an encode-decider script decides per request from its media tokens and the encoders", "[golden][epd]") {
  // Encode instance 3 fails at 0: multimodal rejects the requests with media
  // at routing; scripts/encode/media_heavy.lua sends none while no encode
  // instance takes traffic, so every request completes.
  const std::string flags = kMulti + kPools + "--encode-instances 1 --event 'at=0 action=fail instance=3' ";
  const Result mm = run_blis(flags + "--encode-decider multimodal");
  const Result script =
      run_blis(flags + "--encode-decider " + BLIS_TEST_SOURCE_DIR + "/scripts/encode/media_heavy.lua");
  INFO(script.err);
  REQUIRE(mm.status == 0);
  REQUIRE(script.status == 0);
  CHECK(mm.out.find("Rejected Requests: 99\n") != std::string::npos);
  CHECK(script.out.find("Rejected Requests") == std::string::npos);
  CHECK(metric(script.out, "completed_requests") == 200);
  // With every encoder up the script (media >= 512 tokens) sends the same
  // requests as multimodal on this workload, and one past every prompt none.
  const std::string up = kMulti + kPools + "--encode-instances 1 --encode-decider ";
  const std::string text = std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/encode/media_heavy.lua";
  CHECK(run_blis(up + text).out == run_blis(up + "multimodal").out);
  blis::test::TempDir dir;
  std::string big = "kind = \"encode-decider\"\nfunction encode_request(i, a, v, e, n)\n  return i + a + v >= 1e9\nend\n";
  CHECK(run_blis(up + dir.write("big.lua", big)).out == run_blis(up + "never").out);
}

TEST_CASE("a broken encode-decider script exits 2 naming its file and line", "[golden][epd]") {
  blis::test::TempDir dir;
  const std::string up = kMulti + kPools + "--encode-instances 1 --encode-decider ";
  const std::string number = dir.write("number.lua", "kind = \"encode-decider\"\nfunction encode_request(i, a, v, e, n)\n"
                                                     "  return 1\nend\n");
  const Result r = run_blis(up + number);
  CHECK(r.status == 2);
  CHECK(r.err.find(number + ": encode_request must return true or false, got a number") != std::string::npos);
  const std::string fails = dir.write("fails.lua", "kind = \"encode-decider\"\nfunction encode_request(i, a, v, e, n)\n"
                                                   "  return nil + 1\nend\n");
  const Result f = run_blis(up + fails);
  CHECK(f.status == 2);
  CHECK(f.err.find(fails + ":3:") != std::string::npos);
}

TEST_CASE("an encode-decider library decides per request; a bad answer exits 2 naming the library",
          "[golden][epd]") {
  const std::string up = kMulti + kPools + "--encode-instances 1 --encode-decider ";
  const std::string fixtures = std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-";
  // The workload's media are images only: images-only sends what multimodal sends.
  const Result images = run_blis(up + fixtures + "encode-images.so");
  INFO(images.err);
  REQUIRE(images.status == 0);
  CHECK(images.out == run_blis(up + "multimodal").out);
  CHECK(images.out != run_blis(up + "never").out);
  const Result bad = run_blis(up + fixtures + "encode-bad.so");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("fixture-encode-bad") != std::string::npos);
  CHECK(bad.err.find("decide() answered 2 for request_") != std::string::npos);
}
