-- tenant-over-share: a shedding policy for the gateway's flow control, in Lua.
--
-- With --flow-control --queue-shedding (docs/gateway.md), a request that
-- finds the gateway queue full may push a queued one out. The built-in
-- lowest-priority sheds the least urgent sheddable request. This one sheds
-- from the tenant holding the most places in the queue, its latest request,
-- whatever the band: one tenant's burst cannot crowd the others out of the
-- queue. A request of that same tenant, or of a tenant holding as many
-- places, is refused instead. Requests of a priority >= `protect` (default:
-- critical's 4) are never shed.
--
--   blis run --model qwen/qwen3-14b --workload-spec w.yaml --flow-control \
--     --saturation-detector concurrency --max-concurrency 4 --max-gateway-queue-depth 20 \
--     --queue-shedding --shedding-policy tenant_over_share.lua
kind = "shedding-policy"
summary = "the latest request of the tenant holding the most of the queue (example script)"
version = "1.0"

local protect = 4

function init(config)
  if config.protect ~= nil then protect = config.protect end
end

-- shed_victim(queued, arriving, now_us): queued[1 .. #queued] and arriving
-- are tables {priority, seq, tenant, id, arrival_us, input_tokens,
-- max_output_tokens, slo_class}. Returns the index of the request shed, or
-- nothing to refuse the arriving one.
function shed_victim(queued, arriving, now_us)
  local held = {}
  for i = 1, #queued do
    local t = queued[i].tenant
    held[t] = (held[t] or 0) + 1
  end
  local victim = nil
  for i = 1, #queued do
    local q = queued[i]
    if q.priority < protect then
      local better = victim == nil or held[q.tenant] > held[queued[victim].tenant] or
                     (held[q.tenant] == held[queued[victim].tenant] and q.seq > queued[victim].seq)
      if better then victim = i end
    end
  end
  if victim == nil then return nil end
  local top = queued[victim].tenant
  if arriving.tenant == top or (held[arriving.tenant] or 0) >= held[top] then return nil end
  return victim
end
