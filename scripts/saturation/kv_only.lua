-- kv-only: a saturation detector for the gateway's flow control, in Lua.
--
-- The gateway (--flow-control, docs/gateway.md) asks its saturation
-- detector, at each dispatch try, how saturated the instances are; at 1 or
-- more it holds its queue. The built-in `utilization` detector saturates
-- when either the wait queues or the KV caches fill. This one looks at the
-- KV caches alone: the mean KV utilization over the instances, divided by
-- kv_cache_util_threshold (--kv-cache-util-threshold, default 0.8). Deep
-- wait queues of short requests that need little KV do not hold dispatch.
--
--   blis run --model qwen/qwen3-14b --rate 40 --num-requests 400 \
--     --flow-control --saturation-detector kv_only.lua
kind = "saturation-detector"
summary = "mean KV utilization / kv_cache_util_threshold (example script)"
version = "1.0"

local threshold = 0.8

-- The host gives every detector --max-concurrency, --queue-depth-threshold
-- and --kv-cache-util-threshold; --plugin-config kv_only.lua.KEY=VALUE
-- overrides them.
function init(config)
  local t = config.kv_cache_util_threshold
  if t ~= nil then
    if type(t) ~= "number" or not (t > 0 and t < math.huge) then
      error("kv_cache_util_threshold must be a finite number > 0, got " .. tostring(t))
    end
    threshold = t
  end
end

-- saturation(n): instances[0 .. n-1] are the instances that take traffic, as
-- the router sees them. Returns a finite number >= 0. With no instance the
-- cluster counts as saturated (1), as the built-in detectors do.
function saturation(n)
  if n == 0 then return 1 end
  local sum = 0
  for i = 0, n - 1 do
    sum = sum + instances[i].kv_utilization
  end
  return sum / n / threshold
end
