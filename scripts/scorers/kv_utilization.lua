-- kv-utilization: prefers instances with free KV cache, scoring
-- 1 - kv_utilization (an idle cache scores 1, a full one 0).
summary = "1 - KV cache utilization"
version = "1.0"

function score(n)
  for i = 0, n - 1 do
    scores[i] = 1.0 - instances[i].kv_utilization
  end
end
