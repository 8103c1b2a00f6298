-- kv-headroom: a worked example of a routing scorer written in Lua.
--
-- It prefers instances with the most free KV-cache blocks, relative to their
-- size: score = free_kv_blocks / total_kv_blocks (1 = empty cache, 0 = full).
-- Read it top to bottom; docs/lua.md has the full contract.
--
-- 1. How blis finds out what this file is. A script that defines score(n) is
--    a routing scorer. Saying so explicitly is optional but makes the intent
--    plain (and is required if the file also defines admit or step_time):
kind = "routing-scorer"

-- 2. What `blis plugins list` shows. The registry name comes from the file
--    name with '_' turned into '-': this script registers as "kv-headroom".
summary = "free KV blocks / total KV blocks (example script)"
version = "1.0"

-- 3. Settings. init(config) is optional; blis calls it once per object with
--    the object's configuration as a plain table. Keys are the dotted keys of
--    the configuration ("empty_score" here); values are numbers, booleans,
--    strings or arrays of numbers. Anything kept in a local like this one
--    lives as long as the object.
local empty_score = 0.0  -- score of an instance that reports no KV blocks at all

function init(config)
  if config.empty_score ~= nil then
    empty_score = config.empty_score
  end
end

-- 4. The decision. blis calls score(n) once per routing decision, with:
--      instances[0 .. n-1]  one snapshot per instance (read-only FFI structs)
--      request              the request being routed
--      route                route.now_us, route.count
--      scores[0 .. n-1]     where this function writes one number per instance
--    Indexing is 0-based because these are C arrays. Every slot must be set;
--    a NaN (or a slot left unset) is an error. Scores outside [0, 1] are
--    clamped by the router. Returning nothing is fine; returning a number
--    means "I wrote this many scores", and anything but n is an error.
function score(n)
  for i = 0, n - 1 do
    local inst = instances[i]
    -- 64-bit integer fields arrive as int64 cdata: convert them with
    -- tonumber() before dividing, or the division is an integer division.
    local total = tonumber(inst.total_kv_blocks)
    if total > 0 then
      scores[i] = tonumber(inst.free_kv_blocks) / total
    else
      scores[i] = empty_score
    end
  end
end

-- 5. Optional: observe(chosen) is called after the router picks an instance
--    (0-based index into the same instances array). This example keeps no
--    state, so it does not define it; see docs/lua.md for one that does.
