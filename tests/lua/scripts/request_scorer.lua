-- Reads the request and the route: scores[i] = input_tokens / 1000 +
-- now_us / 1e6 + first block hash (mod 7) + instance index / 100.
local scale = 1000

function init(config)
  scale = config.scale or scale
  assert(config.name == nil or config.name == "probe")
end

function score(n)
  local base = tonumber(request.input_tokens) / scale + tonumber(route.now_us) / 1e6
  local hash = 0
  if request.num_blocks > 0 then
    hash = tonumber(request.block_hashes[0] % 7)
  end
  for i = 0, n - 1 do
    scores[i] = base + hash + instances[i].index / 100
  end
end
