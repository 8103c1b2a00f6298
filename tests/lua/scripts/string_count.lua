-- Returns something that is not a count.
function score(n)
  for i = 0, n - 1 do
    scores[i] = 1
  end
  return "done"
end
