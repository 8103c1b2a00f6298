-- Prefill/decode disaggregation against co-located serving, on the
-- prefix-heavy traffic of examples/prefix-heavy (1,500 questions about 48
-- documents of 4,096 tokens), 4 H100s in every configuration:
--   co-located     4 instances that prefill and decode, prefix-aware routing;
--   P/D always     1 prefill + 3 decode instances, every prompt prefilled on
--                  the prefill instance and its KV sent over a 25 GB/s link;
--   P/D threshold  the same pools, but a request stays on its decode
--                  instance when that instance already holds all but 256
--                  tokens of its prompt (--pd-decider prefix-threshold).
-- Decode routing is prefix-aware in every case (docs/disaggregation.md).
--
--   blis run examples/pd-disaggregation/pd.lua
local prefix_routing = "prefix-affinity:3,queue-depth:2,kv-utilization:2"

return {
  model = "qwen/qwen3-14b",
  workload_trace = "../prefix-heavy/trace.csv",
  cluster = { num_instances = 4, total_kv_blocks = 6000 },
  routing_policy = "weighted",
  routing_scorers = prefix_routing,
  sweep = {
    { },
    { prefill_instances = 1, decode_instances = 3, pd_decider = "always" },
    { prefill_instances = 1, decode_instances = 3, pd_decider = "prefix-threshold", pd_prefix_threshold = 256 },
  },
}
