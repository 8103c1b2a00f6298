-- Writes NaN for instance 2.
function score(n)
  for i = 0, n - 1 do
    scores[i] = (i == 2) and (0 / 0) or 0.5
  end
end
