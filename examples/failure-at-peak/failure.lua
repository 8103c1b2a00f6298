-- An instance failure at peak load: 4 qwen3-14b instances at 30 requests/s,
-- the traffic doubles at 20 s, and instance 2 dies at 25 s. Its queued
-- requests and those still in prefill are re-routed to the others; those
-- already streaming tokens fail (their clients saw the stream break). When
-- the running batches pass 500 requests in all (checked every 100 ms of virtual
-- time), the traffic is shed back to the base rate; instance 2 comes back at 45 s.
--
--   blis run examples/failure-at-peak/failure.lua --timeseries failure.csv
return {
  model = "qwen/qwen3-14b",
  rate = 30,
  num_requests = 2400,
  num_instances = 4,
  events = {
    { at = "20s", action = "rate", factor = 2 },
    { at = "25s", action = "fail", instance = 2, requests = "reroute" },
    { when = "running>500", action = "rate", factor = 0.5 },
    { at = "45s", action = "restore", instance = 2 },
  },
}
