-- A script whose line 5 does not parse.
function score(n)
  for i = 0, n - 1 do
    scores[i] = 1
    scores[i] = = 2
  end
end
