-- sticky-prefix: a routing scorer written for this example. Requests whose
-- prompts start with the same KV block (the same document) go back to the
-- instance that took that document last, where its prefix is likely cached.
-- Unknown documents score every instance alike, so the other scorers decide.
summary = "same first prompt block -> same instance as last time (example)"
version = "1.0"

local owner = {}  -- first block's hash (as a Lua number) -> instance index
local key = nil   -- the current request's key, kept for observe()

-- 64-bit hashes are uint64 cdata; cdata table keys compare by identity, so
-- fold each hash into an exact Lua number first.
local function first_block_key()
  if request.num_blocks == 0 then return nil end
  return tonumber(request.block_hashes[0] % 4503599627370496ULL)
end

function score(n)
  key = first_block_key()
  local home = key and owner[key]
  for i = 0, n - 1 do
    if home == nil or instances[i].index == home then scores[i] = 1 else scores[i] = 0 end
  end
end

function observe(chosen)
  if key ~= nil then owner[key] = instances[chosen].index end
end
