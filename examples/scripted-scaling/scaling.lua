-- A scaling rule and a failure written as code, run inside the simulation in
-- virtual time (docs/scenarios.md "Events from Lua code").
--
-- Two qwen3-14b instances start at 20 requests/s; the traffic triples at
-- 30 s. Every 10 s a callback reads the cluster and, when more than 50
-- requests wait in the queues, adds an instance (it takes traffic after the
-- pool's 15 s of provisioning), up to 8 in the pool (a failed instance keeps
-- its slot). At 60 s the instance with the longest queue fails; its requests
-- that have no token out yet are re-routed, the others fail.
--
--   blis run examples/scripted-scaling/scaling.lua --format table
local max_instances = 8

every(10, function(c)
  local queued = 0
  for _, i in ipairs(c.instances) do queued = queued + i.queue end
  if queued > 50 and c.pools.default.present < max_instances then
    print(string.format("t=%.0fs: %d requests waiting on %d instance(s): adding one", c.time, queued,
                        c.pools.default.present))
    blis.add { count = 1 }
  end
end)

at("60s", function(c)
  local worst
  for _, i in ipairs(c.instances) do
    if i.state == "active" and (worst == nil or i.queue > worst.queue) then worst = i end
  end
  blis.fail { instance = worst.index, requests = "reroute" }
end)

return {
  model = "qwen/qwen3-14b",
  num_instances = 2,
  rate = 20,
  num_requests = 4000,
  lifecycle = "max=8 provisioning_delay=15s",
  events = { { at = "30s", action = "rate", factor = 3 } },
}
