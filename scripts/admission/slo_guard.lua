-- slo-guard: an admission policy that sheds load before the queues grow past
-- what a TTFT budget allows.
--
-- For each arriving request it estimates the queueing delay the request would
-- see on the least-loaded instance: the requests waiting there (routed but not
-- yet running) times an estimated service time per request. If that delay
-- exceeds the request's TTFT budget, the request is rejected. Budgets depend
-- on the SLO class, so sheddable, batch and background requests go first, and
-- critical ones last:
--
--   class                          budget
--   sheddable, batch, background   ttft_budget_ms * shed_factor
--   critical                       ttft_budget_ms * critical_factor
--   any other (standard, default)  ttft_budget_ms
--
-- Calibrate ms_per_request to the deployment: about 1000 / (requests per
-- second one instance serves when saturated).
kind = "admission-policy"
summary = "rejects when the least-loaded instance's estimated queueing delay exceeds the TTFT budget"
version = "1.0"

local settings = {
  ttft_budget_ms = 2000,   -- budget of standard and default-class requests
  ms_per_request = 60,     -- estimated delay each waiting request adds
  shed_factor = 0.5,       -- budget multiplier of sheddable, batch and background requests
  critical_factor = 2,     -- budget multiplier of critical requests
}

-- Budget multiplier by request.slo_class (blis_slo_class).
local factor = {}

function init(config)
  for key in pairs(settings) do
    local v = config[key]
    if v ~= nil then
      if type(v) ~= "number" or not (v > 0 and v < math.huge) then
        error(key .. " must be a finite number > 0, got " .. tostring(v))
      end
      settings[key] = v
    end
  end
  factor = {
    [1] = settings.critical_factor,  -- BLIS_SLO_CRITICAL
    [3] = settings.shed_factor,      -- BLIS_SLO_SHEDDABLE
    [4] = settings.shed_factor,      -- BLIS_SLO_BATCH
    [5] = settings.shed_factor,      -- BLIS_SLO_BACKGROUND
  }
end

-- Requests that would run before a new one on instance s: those in its wait
-- queue, or routed to it and not yet running, whichever is larger (the queue
-- depth may be a stale snapshot; in_flight is always live).
local function waiting(s)
  local w = s.in_flight - s.batch_size
  if s.queue_depth > w then w = s.queue_depth end
  return w
end

function admit()
  local least = math.huge
  for i = 0, tonumber(route.count) - 1 do
    local w = waiting(instances[i])
    if w < least then least = w end
  end
  local delay = least * settings.ms_per_request
  local budget = settings.ttft_budget_ms * (factor[request.slo_class] or 1)
  if delay > budget then
    return false, string.format("estimated queueing delay %.0f ms exceeds the %.0f ms TTFT budget",
                                delay, budget)
  end
  return true
end
