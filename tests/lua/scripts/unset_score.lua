-- Forgets the last instance.
function score(n)
  for i = 0, n - 2 do
    scores[i] = 1
  end
end
