-- sampled-random: an offload eviction for the KV offload CPU tier, in Lua
-- (docs/kv-offload.md).
--
-- The built-in lru evicts the least recently used block. This one evicts a
-- random block among the least recently used ones the host offers (at most
-- 8): the sampled eviction of caches that do not keep an exact recency
-- order. With `backed_first = 1` it prefers a block that a secondary tier
-- still holds (dropping it costs a read, not a recomputation).
--
--   kv_offload:
--     cpu_bytes_to_use: 4000000000
--     eviction_policy: sampled_random.lua
kind = "offload-eviction"
summary = "a random one of the least recently used CPU blocks (example script)"
version = "1.0"

local backed_first = 0

function init(config)
  if config.backed_first ~= nil then backed_first = config.backed_first end
end

-- evict_block(candidates, now_us, used, capacity): candidates[1 ..
-- #candidates] are tables {hash, secondary} (secondary: the first secondary
-- tier holding a copy, 1-based, or 0), least recently used first. Returns
-- the position of the block evicted.
function evict_block(candidates, now_us, used, capacity)
  if backed_first == 1 then
    local backed = {}
    for i, c in ipairs(candidates) do
      if c.secondary > 0 then backed[#backed + 1] = i end
    end
    if #backed > 0 then return backed[math.random(#backed)] end
  end
  return math.random(#candidates)
end
