-- Admits requests shorter than `max_tokens` (config, default 1000) while the
-- cluster's total queue stays under 10; never admits tenant "banned".
local max_tokens = 1000

function init(config)
  max_tokens = config.max_tokens or max_tokens
end

function admit()
  if cstring(request.tenant_id) == "banned" then
    return false, "tenant " .. cstring(request.tenant_id) .. " is banned"
  end
  local queued = 0
  for i = 0, tonumber(route.count) - 1 do
    queued = queued + instances[i].queue_depth
  end
  if queued >= 10 then
    return false, "cluster queue full"
  end
  if request.input_tokens >= max_tokens then
    return false, "prompt too long"
  end
  return true
end
