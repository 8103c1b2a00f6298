-- queue-depth: prefers the instance with the least effective load, where
-- effective load = queue_depth + batch_size + in_flight. Loads are min-max
-- normalised over the candidates: the least loaded scores 1, the most loaded 0,
-- and when every instance carries the same load they all score 1.
summary = "min-max normalised effective load (queue + batch + in flight), least loaded scores 1"
version = "1.0"

local function load_of(inst)
  return inst.queue_depth + inst.batch_size + inst.in_flight
end

function score(n)
  -- lo starts above any load and hi at zero: loads are never negative.
  local lo, hi = math.huge, 0
  for i = 0, n - 1 do
    local load = load_of(instances[i])
    if load < lo then lo = load end
    if load > hi then hi = load end
  end
  if hi == lo then
    for i = 0, n - 1 do scores[i] = 1.0 end
    return
  end
  local span = hi - lo
  for i = 0, n - 1 do
    scores[i] = (hi - load_of(instances[i])) / span
  end
end
