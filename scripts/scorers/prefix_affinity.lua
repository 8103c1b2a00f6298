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
version = "1.1"

local band, rshift, tohex = bit.band, bit.rshift, bit.tohex

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

-- A 64-bit hash is cdata, which a table keys by identity, not value. The
-- index keys it by a Lua number instead: its low 52 bits plus 0.5 (exact in
-- a double; not an integer, because LuaJIT does not compile lookups of
-- integer keys in a table's hash part); the entry's value holds the slot and
-- the hash's high 12 bits, as slot * 4096 + high, so one table read tells a
-- hit from another hash with the same low bits. Such a second hash (about
-- one in 2^52 pairs) is keyed by its 16 hex digits in a side table, so the
-- set stays exact. Arrays are 1-based for the same reason.
local LOW_BITS = 0xFFFFFFFFFFFFFULL
local HIGH = 4096

-- instance index -> set. A set is a doubly linked list over slots 1..size
-- (prev/next, 0 = none; least recent at the head) with each slot's low bits
-- in `low`; `map` finds a slot by low bits, `spill` by hex digits (the
-- slot's hex digits are in `hex` while it is there).
local sets = {}

-- `version` counts the observations that changed the set; `seen`,
-- `seen_version` and `seen_matched` remember its last score (see score()).
local function new_set()
  return { map = {}, spill = {}, nspill = 0, hex = {}, low = {},
           prev = {}, next = {}, head = 0, tail = 0, size = 0,
           version = 0, seen = -1, seen_version = -1, seen_matched = 0 }
end

-- The current request's hashes as numbers (block b at b + 1), converted
-- once: score() and observe() of one routing decision share them.
local hashes, lows, highs = nil, {}, {}
local converted_id, converted_n = -1, -1

-- Request ids are below 2^53, so tonumber keeps them exact.
local function convert()
  local id, n = tonumber(request.id), tonumber(request.num_blocks)
  hashes = request.block_hashes
  if id == converted_id and n == converted_n then return n end
  for b = 0, n - 1 do
    local h = hashes[b]
    lows[b + 1] = tonumber(band(h, LOW_BITS)) + 0.5
    highs[b + 1] = tonumber(rshift(h, 52))
  end
  converted_id, converted_n = id, n
  return n
end

-- The slot holding block b's hash, or nil.
local function find(set, b)
  local v, high = set.map[lows[b + 1]], highs[b + 1]
  if v and v % HIGH == high then return (v - high) / HIGH end
  if set.nspill > 0 then return set.spill[tohex(hashes[b])] end
  return nil
end

local function unlink(set, s)
  local prev, next = set.prev, set.next
  local p, n = prev[s], next[s]
  if p ~= 0 then next[p] = n else set.head = n end
  if n ~= 0 then prev[n] = p else set.tail = p end
end

local function link_back(set, s)
  local t = set.tail
  set.prev[s], set.next[s] = t, 0
  if t ~= 0 then set.next[t] = s else set.head = s end
  set.tail = s
end

-- Block b's hash becomes the most recent; a new one evicts the least recent
-- first when the set is full, then goes in as the most recent.
local function touch(set, b)
  local s = find(set, b)
  if s then
    if s ~= set.tail then
      unlink(set, s)
      link_back(set, s)
    end
    return
  end
  if set.size >= capacity then
    s = set.head
    unlink(set, s)
    local hx = set.hex[s]
    if hx then
      set.spill[hx], set.hex[s] = nil, nil
      set.nspill = set.nspill - 1
    else
      set.map[set.low[s]] = nil
    end
  else
    s = set.size + 1
    set.size = s
  end
  local low = lows[b + 1]
  set.low[s] = low
  if set.map[low] == nil then
    set.map[low] = s * HIGH + highs[b + 1]
  else
    local hx = tohex(hashes[b])
    set.spill[hx], set.hex[s] = s, hx
    set.nspill = set.nspill + 1
  end
  link_back(set, s)
end

-- The request scored last: its hashes, and the number of score() calls.
local last_lows, last_highs, last_n, scored = {}, {}, 0, 0

-- Most requests share a prefix with the one before, and most sets did not
-- change since it was scored (only the chosen one is observed). Such a set
-- matched `m` leading blocks of the last request; if the two requests share
-- their first `common` blocks, this one matches the same m when m < common
-- (its block m is the last one's, not in the set), and at least `common`
-- otherwise, so the walk starts there.
function score(n)
  local total = convert()
  scored = scored + 1
  local common, limit = 0, total < last_n and total or last_n
  while common < limit and lows[common + 1] == last_lows[common + 1] and highs[common + 1] == last_highs[common + 1] do
    common = common + 1
  end
  for i = 0, n - 1 do
    local matched = 0
    local set = sets[instances[i].index]
    if set and total > 0 then
      local walk = true
      if set.seen == scored - 1 and set.seen_version == set.version then
        matched = set.seen_matched
        if matched < common then walk = false else matched = common end
      end
      if walk then
        local map = set.map
        while matched < total do
          local v = map[lows[matched + 1]]
          if not (v and v % HIGH == highs[matched + 1]) and not find(set, matched) then break end
          matched = matched + 1
        end
      end
      set.seen, set.seen_version, set.seen_matched = scored, set.version, matched
    end
    scores[i] = total > 0 and matched / total or 0
  end
  for b = 0, total - 1 do
    last_lows[b + 1], last_highs[b + 1] = lows[b + 1], highs[b + 1]
  end
  last_n = total
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
    set = new_set()
    sets[index] = set
  end
  set.version = set.version + 1
  for b = 0, convert() - 1 do
    touch(set, b)
  end
end
