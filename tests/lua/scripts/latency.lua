-- A toy latency model: step = 100 + 2 per prefill token + 10 per decode
-- request; queueing = input_tokens / 10; 5 µs per output token.
kind = "latency-model"

local base_us = 100

function init(config)
  base_us = config.base_us or base_us
end

function step_time(n)
  assert(n == tonumber(batch.count))
  local t = base_us
  for i = 0, n - 1 do
    local e = entries[i]
    if e.phase == 0 then
      t = t + 2 * e.new_tokens
    else
      t = t + 10
    end
  end
  return t + 0.75  -- truncated by the host
end

function queueing_time()
  return tonumber(request.input_tokens) / 10
end

function output_token_time()
  return 5
end
