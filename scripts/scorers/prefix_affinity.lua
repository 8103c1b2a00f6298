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
version = "1.0"

local tohex = bit.tohex

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

-- instance index -> { map = {hash key -> node}, head, tail, size }: a doubly
-- linked list of nodes { key, prev, next }, least recent at the head.
local sets = {}

-- Block hashes are 64-bit cdata, which compare by value but hash by identity
-- as table keys: the index keys them by their 16 hex digits instead.
local hashes, keys, nkeys = nil, {}, 0

-- The key of block b (0-based), converted at most once per call.
local function key_at(b)
  while nkeys <= b do
    keys[nkeys] = tohex(hashes[nkeys])
    nkeys = nkeys + 1
  end
  return keys[b]
end

local function unlink(set, node)
  local p, n = node.prev, node.next
  if p then p.next = n else set.head = n end
  if n then n.prev = p else set.tail = p end
  node.prev, node.next = nil, nil
end

local function link_back(set, node)
  local t = set.tail
  node.prev, node.next = t, nil
  if t then t.next = node else set.head = node end
  set.tail = node
end

-- A known hash becomes the most recent; a new one evicts the least recent
-- first when the set is full, then goes in as the most recent.
local function touch(set, key)
  local node = set.map[key]
  if node then
    if node ~= set.tail then
      unlink(set, node)
      link_back(set, node)
    end
    return
  end
  if set.size >= capacity then
    node = set.head
    unlink(set, node)
    set.map[node.key] = nil
  else
    node = {}
    set.size = set.size + 1
  end
  node.key = key
  link_back(set, node)
  set.map[key] = node
end

function score(n)
  local total = tonumber(request.num_blocks)
  hashes, nkeys = request.block_hashes, 0
  for i = 0, n - 1 do
    local matched = 0
    local set = sets[instances[i].index]
    if set and total > 0 then
      local map = set.map
      while matched < total and map[key_at(matched)] do
        matched = matched + 1
      end
    end
    scores[i] = total > 0 and matched / total or 0
  end
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
    set = { map = {}, head = nil, tail = nil, size = 0 }
    sets[index] = set
  end
  hashes, nkeys = request.block_hashes, 0
  for b = 0, tonumber(request.num_blocks) - 1 do
    touch(set, key_at(b))
  end
end
