-- weighted-tenants: a fairness policy for the gateway's flow control, in Lua.
--
-- With --flow-control (docs/gateway.md) each priority band of the gateway
-- queue holds one flow per tenant; when the band may send, the fairness
-- policy picks the flow. The built-in round-robin gives every tenant one
-- turn in name order; this one gives tenant T `weight.T` turns in a row
-- (1 when not given), so a paying tenant gets a larger share of a band
-- under overload without a band of its own. (A band of one flow sends
-- without asking: turns are counted over the picks the script is asked.)
--
--   blis run --model qwen/qwen3-14b --workload-spec w.yaml --flow-control \
--     --saturation-detector concurrency --max-concurrency 4 \
--     --fairness-policy weighted_tenants.lua --plugin-config weighted_tenants.lua.weight.gold=3
kind = "fairness-policy"
summary = "tenants of a band in turn, tenant T weight.T turns in a row (example script)"
version = "1.0"

local weights = {}
local current = nil  -- the tenant whose turns are running
local left = 0       -- its turns left

function init(config)
  -- The host's own keys (model.*, hardware.*, tp, ...) come too: only
  -- weight.* keys are this script's.
  for key, value in pairs(config) do
    local tenant = string.match(key, "^weight%.(.+)$")
    if tenant ~= nil then
      if type(value) ~= "number" or value < 1 or value ~= math.floor(value) then
        error("weight." .. tenant .. " must be a whole number >= 1")
      end
      weights[tenant] = value
    end
  end
end

-- pick_flow(flows, priority, now_us): flows[1 .. #flows] are the band's
-- tenant flows in name order ({tenant, queued, head_seq, last, head}).
-- Returns the index of the one that sends. Without weights this is the
-- built-in round-robin: the flow after the one picked last.
function pick_flow(flows, priority, now_us)
  local last = nil
  for i = 1, #flows do
    if flows[i].last then last = i end
  end
  if last ~= nil and flows[last].tenant == current and left > 0 then
    left = left - 1
    return last
  end
  local next = last == nil and 1 or last % #flows + 1
  current = flows[next].tenant
  left = (weights[current] or 1) - 1
  return next
end
