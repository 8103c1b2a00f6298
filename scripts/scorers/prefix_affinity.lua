-- prefix-affinity: the share of a request's leading KV blocks that were
-- already routed to an instance. Like the built-in scorer of the same name it
-- keeps a router-side index per instance: an LRU set of the block hashes sent
-- there, learned from the router's own choices through observe(), never from
-- what the instances actually cache.
--
-- score = matched / total, where total is the request's number of complete
-- input blocks and matched is the length of the leading run of its block
-- hashes found in the instance's set (a request with no complete block, or an
-- instance never chosen, scores 0). Matching does not refresh recency.
summary = "share of the request's leading blocks already routed to the instance (router-side LRU)"
version = "1.4"

-- Block hashes per instance set; the oldest hash is evicted beyond this.
local capacity = 10000

function init(config)
  local c = config.prefix_cache_capacity
  if c ~= nil then
    if type(c) ~= "number" or c ~= math.floor(c) or c < 1 or c > 2147483647 then
      error("prefix_cache_capacity must be an integer between 1 and 2147483647, got "
            .. tostring(c))
    end
    capacity = c
  end
end

-- instance index -> its set: an lru_set of the block hashes routed there
-- (the host's LRU set of 64-bit keys, docs/lua.md), and what its last score
-- found. `version` counts the observations that changed it; `seen`,
-- `seen_version` and `seen_matched` remember its last score (see score()).
local sets = {}

-- The request scored last: its first blocks' hashes (a prefix_memo, kept
-- by the host), and the number of score() calls so far.
local last, scored = prefix_memo(), 0

-- Most requests share a prefix with the one before, and most sets did not
-- change since it was scored (only the chosen one is observed). Such a set
-- matched `m` leading blocks of the last request; if the two requests share
-- their first `common` blocks, this one matches the same m when m < common
-- (its block m is the last one's, not in the set), and at least `common`
-- otherwise, so the walk starts there. Only the last request's blocks up to
-- one past the longest match are kept: `common` never needs to exceed that.
function score(n)
  local hashes = request.block_hashes
  local total = tonumber(request.num_blocks)
  local shared = total - tonumber(request.own_blocks)  -- no set holds the blocks past these
  scored = scored + 1
  local common = last.common(hashes, total)
  local longest = 0
  for i = 0, n - 1 do
    local matched = 0
    local set = sets[instances[i].index]
    if set and total > 0 then
      local walk = true
      if set.seen == scored - 1 and set.seen_version == set.version then
        matched = set.seen_matched
        if matched < common then walk = false else matched = common end
      end
      if walk and matched < shared then matched = set.hashes.leading(hashes, matched, shared) end
      set.seen, set.seen_version, set.seen_matched = scored, set.version, matched
      if matched > longest then longest = matched end
    end
    scores[i] = total > 0 and matched / total or 0
  end
  local keep = longest < total and longest + 1 or total
  last.remember(hashes, keep)
  return n
end

-- Touches the request's hashes in block order, so its first block ends up the
-- least recent and is the first to go.
function observe(chosen)
  if chosen < 0 or chosen >= route.count then return end
  local index = instances[chosen].index
  if index < 0 then return end
  local set = sets[index]
  if set == nil then
    set = { hashes = lru_set(capacity), version = 0, seen = -1, seen_version = -1, seen_matched = 0 }
    sets[index] = set
  end
  set.version = set.version + 1
  -- The request's own last blocks (request.own_blocks) are never looked up
  -- again: they only take room.
  local own = tonumber(request.own_blocks)
  set.hashes.touch_run(request.block_hashes, 0, tonumber(request.num_blocks) - own)
  if own > 0 then set.hashes.add_anonymous(own) end
end
