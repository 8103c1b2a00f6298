-- Fails at run time on line 7, inside a helper called by score.
local function helper(inst)
  return inst.queue_depth
end

local function broken()
  return nil + 1
end

function score(n)
  for i = 0, n - 1 do
    scores[i] = helper(instances[i]) + broken()
  end
end
