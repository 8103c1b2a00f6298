-- A decode instance dying at peak in a P/D cluster: a prefill pool of 2
-- H100s and a decode pool of 4 A100s (pools with a role key, each with its
-- own GPU and price), every prompt prefilled on the prefill pool and its KV
-- sent over a 25 GB/s link; routing by queue depth and KV use. The traffic doubles at 20 s and decode instance
-- 3 dies at 25 s; it comes back at 45 s. Its queued requests and those whose
-- KV was on the wire to it are prefilled again and decoded elsewhere; those
-- already streaming tokens fail.
--
--   blis run examples/pd-failure-at-peak/pd-failure.lua --format table
return {
  model = "qwen/qwen3-14b",
  rate = 12,
  num_requests = 1200,
  pd_decider = "always",
  routing_policy = "weighted",
  routing_scorers = "queue-depth:2,kv-utilization:2",
  pools = {
    "name=prefill count=2 role=prefill hardware=H100 cost_per_hour=4.5",
    "name=decode count=4 role=decode hardware=A100-80 cost_per_hour=2.2",
  },
  events = {
    { at = "20s", action = "rate", factor = 2 },
    { at = "25s", action = "fail", instance = 3, requests = "reroute" },
    { at = "45s", action = "restore", instance = 3 },
  },
}
