-- Fails while its top level runs (line 3).
local settings = nil
local threshold = settings.threshold

function score(n)
  for i = 0, n - 1 do scores[i] = threshold end
end
