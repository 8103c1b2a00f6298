// Node pools from the command line, scenario files and policy files
// (docs/autoscaling.md "Node pools", spec head §6.1-§6.2).
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <string>

using blis::test::TempDir;

namespace {

const std::string kNodes =
    " --node-pool 'name=h100 gpu_type=H100 gpus_per_node=8 initial_nodes=1 max_nodes=2 "
    "provisioning_delay=30s cost_per_hour=98.32'";
const std::string kBase = "run --model qwen/qwen3-14b --hardware H100 --tp 2 --num-instances 4";

}  // namespace

TEST_CASE("node pools: the autoscaler's fifth TP-2 instance provisions a second 8-GPU node, billed per node",
          "[golden][fleet]") {
  const std::string cmd = kBase + " --rate 60 --num-requests 3000 --total-kv-blocks 1500" + kNodes +
                          " --lifecycle 'min=4 max=5' --autoscaler 'interval=10s' --format table";
  const Result r = run_blis(cmd);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("=== Autoscaler ===\n10 s: default +1 (") != std::string::npos);
  // Node 0 over the whole run (59.847 s), node 1 from the decision at 10 s
  // (49.847 s): 109.694 s = 0.0305 node-hours, x 8 GPUs = 0.2438 GPU-hours,
  // x $98.32 = $2.9959; the instances themselves held 0.1607 GPU-hours.
  CHECK(
      r.out.find(
          "default: 4 instance(s) at start, 5 at end, peak 5 (1 added, 0 removed) of qwen/qwen3-14b on H100 "
          "(TP 2), latency model roofline; 3000 completed; 0.1607 GPU-hours; no price\n"
          "node pool h100: 1 node(s) of 8 x H100 at start, 2 at end, peak 2 (1 provisioned, 0 released); "
          "0.0305 node-hours; 0.2438 GPU-hours; $2.9959\n"
          "Total: 4 instance(s) at start, 5 at end, over 59.847 s; 0.2438 GPU-hours; $2.9959\n") !=
      std::string::npos);
  CHECK(run_blis(cmd).out == r.out);  // deterministic
}

TEST_CASE("node pools: the YAML policy file's node_pools, an add event, and the JSON fleet object",
          "[golden][fleet][config]") {
  TempDir dir;
  const std::string yaml = dir.write("p.yaml", R"(node_pools:
  - name: h100-pool
    gpu_type: H100
    gpus_per_node: 8
    gpu_memory_gib: 80
    initial_nodes: 1
    min_nodes: 0
    max_nodes: 2
    provisioning_delay: {mean: 30, stddev: 0}
    cost_per_hour: 98.32
)");
  const std::string cmd = kBase + " --rate 10 --num-requests 600 --policy-config " + yaml +
                          " --event 'at=10s action=add count=1'";
  const Result r = run_blis(cmd + " --format table");
  REQUIRE(r.status == 0);
  // 62.084 s + 52.084 s = 0.0317 node-hours; 0.2537 GPU-hours; $3.1181.
  CHECK(r.out.find("node pool h100-pool: 1 node(s) of 8 x H100 at start, 2 at end, peak 2 (1 provisioned, 0 "
                   "released); 0.0317 node-hours; 0.2537 GPU-hours; $3.1181\n"
                   "Total: 4 instance(s) at start, 5 at end, over 62.084 s; 0.2537 GPU-hours; $3.1181\n") !=
        std::string::npos);
  const Result j = run_blis(cmd + " --format json");
  REQUIRE(j.status == 0);
  CHECK(
      j.out.find(
          "\"node_pools\": [\n      {\"name\": \"h100-pool\", \"gpu_type\": \"H100\", \"gpus_per_node\": 8, "
          "\"nodes_at_start\": 1, \"nodes_at_end\": 2, \"peak_nodes\": 2, \"provisioned\": 1, \"released\": "
          "0, "
          "\"node_hours\": ") != std::string::npos);
  CHECK(j.out.find("\"instances_waited_for_gpus\": 0,\n    \"instances_waiting_at_end\": 0,\n    "
                   "\"scaling_actions\": []") != std::string::npos);
  CHECK(j.out.substr(j.out.size() - 6) == "  }\n}\n");
  // Without node pools, none of it.
  const Result plain = run_blis(kBase +
                                " --rate 10 --num-requests 600 --event 'at=10s action=add count=1' "
                                "--format table");
  CHECK(plain.out.find("node pool") == std::string::npos);
}

TEST_CASE("node pools: a TOML scenario's [[node_pools]]; instances that cannot be placed wait, and say so",
          "[golden][fleet]") {
  TempDir dir;
  const std::string toml = dir.write("s.toml", R"(model = "qwen/qwen3-14b"
hardware = "H100"
tp = 4
num-instances = 2
events = ["at=5s action=add count=1"]

[workload]
rate = 10
num-requests = 300

[[node_pools]]
name = "h100"
gpu_type = "H100"
gpus_per_node = 8
initial_nodes = 1
cost_per_hour = 80
)");
  const Result r = run_blis("run " + toml + " --format table");
  REQUIRE(r.status == 0);
  CHECK(r.out.find(
            "node pool h100: 1 node(s) of 8 x H100 at start, 1 at end, peak 1 (0 provisioned, 0 released)") !=
        std::string::npos);
  CHECK(
      r.out.find(
          "Instances that waited for GPUs (node pools at their maximum): 1, 1 still waiting at the end\n") !=
      std::string::npos);
  CHECK(r.err.find(
            "instance 2 waits for 4 free GPU(s): node pool h100 has no room and is at its maximum of 1") !=
        std::string::npos);
}

TEST_CASE("node pools: bad settings are refused with where and how to fix", "[golden][fleet][config]") {
  TempDir dir;
  const std::string bad =
      dir.write("bad.yaml", "node_pools:\n  - name: a\n    gpu_type: H100\n    colour: red\n");
  Result r = run_blis(kBase + " --policy-config " + bad);
  CHECK(r.status == 2);
  CHECK(r.err.find("bad.yaml:4: unknown key \"node_pools[0].colour\"") != std::string::npos);
  const std::string missing =
      dir.write("m.yaml", "node_pools:\n  - name: a\n    gpu_type: H100\n    max_nodes: 1\n");
  r = run_blis(kBase + " --policy-config " + missing);
  CHECK(r.status == 2);
  CHECK(r.err.find("m.yaml:2: node_pools[0]: gpus_per_node is required") != std::string::npos);
  const std::string neg =
      dir.write("n.yaml", "node_pools:\n  - name: a\n    gpu_type: H100\n    gpus_per_node: 0\n");
  r = run_blis(kBase + " --policy-config " + neg);
  CHECK(r.status == 2);
  CHECK(r.err.find("n.yaml:4: node_pools[0].gpus_per_node must be in [1, 100000], got 0") !=
        std::string::npos);
  r = run_blis(kBase + " --node-pool 'name=a gpu_type=A100 gpus_per_node=8 max_nodes=1'");
  CHECK(r.status == 2);
  CHECK(r.err.find("pool default runs on H100, but no node pool has that gpu_type (node pools have A100)") !=
        std::string::npos);
  r = run_blis(kBase + " --node-pool 'name=a gpu_type=H100 gpus_per_node=1 max_nodes=1'");
  CHECK(r.status == 2);
  CHECK(r.err.find("pool default needs 2 GPUs per instance (TP), more than node pool a's gpus_per_node 1") !=
        std::string::npos);
  r = run_blis(kBase + " --node-pool 'name=a gpu_type=H100 gpus_per_node=8 initial_nodes=3 max_nodes=2'");
  CHECK(r.status == 2);
  CHECK(r.err.find("max_nodes 2 is below initial_nodes 3") != std::string::npos);
  r = run_blis(kBase + " --node-pool 'name=a gpu_type=H100 gpus_per_node=8 max_nodes=1 colour=red'");
  CHECK(r.status == 2);
  CHECK(r.err.find("unknown key 'colour'") != std::string::npos);
  CHECK(run_blis("run --help").out.find("--node-pool") != std::string::npos);
}

TEST_CASE("node pools: gpu_memory_gib sizes the KV cache of the instances on that GPU type",
          "[golden][fleet]") {
  // qwen3-14b at TP 2, 90 % of the memory: 80 GiB gives 89941 blocks, 40 GiB 30959.
  const std::string cmd =
      kBase + " --rate 10 --num-requests 50 --gpu-memory-utilization 0.9 --log info" +
      " --node-pool 'name=h gpu_type=h100 gpus_per_node=8 initial_nodes=1 gpu_memory_gib=";
  const Result full = run_blis(cmd + "80'");
  REQUIRE(full.status == 0);
  CHECK(full.err.find("auto-calculated total-kv-blocks=89941 (GPU=80 GiB x 0.9, TP=2") != std::string::npos);
  const Result half = run_blis(cmd + "40'");
  REQUIRE(half.status == 0);
  CHECK(half.err.find("auto-calculated total-kv-blocks=30959 (GPU=40 GiB x 0.9, TP=2") != std::string::npos);
}

TEST_CASE("node pools: two pools on two node pools, each billed per node", "[golden][fleet]") {
  TempDir dir;
  const std::string toml = dir.write("m.toml", R"(model = "qwen/qwen3-14b"
[workload]
rate = 20
num-requests = 600
[[pools]]
name = "h100"
count = 3
hardware = "H100"
tp = 2
[[pools]]
name = "a100"
count = 2
hardware = "A100-80"
tp = 4
[[node_pools]]
name = "h100-nodes"
gpu_type = "H100"
gpus_per_node = 4
initial_nodes = 1
max_nodes = 2
provisioning_delay = "20s"
cost_per_hour = 40
[[node_pools]]
name = "a100-nodes"
gpu_type = "a100-80"
gpus_per_node = 8
initial_nodes = 1
cost_per_hour = 20
)");
  const Result r = run_blis("run " + toml + " --format table");
  REQUIRE(r.status == 0);
  // Three TP-2 instances on 4-GPU nodes: the third asks for a second node at
  // t=0 (ready at 20 s). 2 x 32.055 s = 0.0178 node-hours x 4 GPUs, x $40;
  // the A100 pair fits one 8-GPU node: 0.0089 node-hours x 8 GPUs, x $20.
  CHECK(r.out.find(
            "node pool h100-nodes: 1 node(s) of 4 x H100 at start, 2 at end, peak 2 (1 provisioned, 0 "
            "released); 0.0178 node-hours; 0.0712 GPU-hours; $0.7123\n"
            "node pool a100-nodes: 1 node(s) of 8 x a100-80 at start, 1 at end, peak 1 (0 provisioned, 0 "
            "released); 0.0089 node-hours; 0.0712 GPU-hours; $0.1781\n"
            "Total: 5 instance(s) at start, 5 at end, over 32.055 s; 0.1425 GPU-hours; $0.8904\n") !=
        std::string::npos);
}
