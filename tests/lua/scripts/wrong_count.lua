-- Sets every score but claims to have written one more.
function score(n)
  for i = 0, n - 1 do
    scores[i] = 1
  end
  return n + 1
end
