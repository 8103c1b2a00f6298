-- Prefix-heavy traffic: 1,500 questions about 48 documents of 4,096 tokens
-- (trace.csv), on 4 instances whose KV cache holds only part of the
-- documents. Routing that sends a document back to where it is cached cuts
-- TTFT; the sweep compares the built-in policies with a scorer written in Lua
-- (sticky_prefix.lua, beside this file).
--
--   blis run examples/prefix-heavy/prefix.lua
local configurations = {
  { routing_policy = "round-robin" },
  { routing_policy = "least-loaded" },
  { routing_policy = "weighted", routing_scorers = "queue-depth:1" },
  { routing_policy = "weighted", routing_scorers = "prefix-affinity:3,queue-depth:2,kv-utilization:2" },
  { routing_policy = "weighted", routing_scorers = "sticky_prefix.lua:3,queue-depth:2" },
}

return {
  model = "qwen/qwen3-14b",
  workload_trace = "trace.csv",   -- relative paths are read beside the scenario
  cluster = { num_instances = 4, total_kv_blocks = 6000 },
  sweep = configurations,
}
