-- my-scorer: the README tour's own Lua scorer, to copy and change. It prefers
-- instances with fewer requests in flight: score = 1 / (1 + in_flight).
-- Found by name with --script-dir examples/my-scripts (the file name with '_'
-- turned into '-'); docs/lua.md has the full contract.
kind = "routing-scorer"
summary = "1 / (1 + requests in flight) (README tour example)"
version = "1.0"

function score(n)
  for i = 0, n - 1 do
    scores[i] = 1.0 / (1.0 + instances[i].in_flight)
  end
end
