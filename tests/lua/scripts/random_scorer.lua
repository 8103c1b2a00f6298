-- scores[i] = math.random(); init checks the integer forms' ranges.
function init(config)
  for _ = 1, 1000 do
    local a = math.random(6)
    assert(a >= 1 and a <= 6 and a == math.floor(a), "random(6) out of range: " .. a)
    local b = math.random(-3, 3)
    assert(b >= -3 and b <= 3 and b == math.floor(b), "random(-3, 3) out of range: " .. b)
    local c = math.random()
    assert(c >= 0 and c < 1, "random() out of range: " .. c)
  end
  assert(not pcall(math.random, 0), "random(0) must fail")
  assert(not pcall(math.random, 5, 4), "random(5, 4) must fail")
end

function score(n)
  for i = 0, n - 1 do
    scores[i] = math.random()
  end
end
