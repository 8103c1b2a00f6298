-- Keeps state across calls: scores[i] = calls so far, plus 100 for the
-- instance chosen last (told through observe).
local calls = 0
local last_chosen = -1
observed = 0

function score(n)
  calls = calls + 1
  for i = 0, n - 1 do
    scores[i] = calls + (i == last_chosen and 100 or 0)
  end
end

function observe(chosen)
  last_chosen = chosen
  observed = observed + 1
end
