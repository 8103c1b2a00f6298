-- mru: an adapter eviction for LoRA adapter slots, in Lua (docs/lora.md).
--
-- When a cold load finds an instance's adapter slots full, the built-in lru
-- evicts the least recently used adapter no running request uses. This one
-- evicts the most recently used of them instead: under a cyclic sweep over
-- more adapters than slots (a batch job visiting every adapter in turn) lru
-- evicts each adapter just before it is needed again, while mru keeps most
-- of the cycle resident. Under skewed traffic (a few hot adapters) it does
-- worse than lru: it evicts the hot ones.
--
--   blis run ... --lora-config lora.yaml --lora-eviction mru.lua
kind = "adapter-eviction"
summary = "the most recently used adapter no running request uses (example script)"
version = "1.0"

-- evict_adapter(loading, candidates, now_us, instance): `candidates` are the
-- ids of the resident adapters no running request uses, least recently used
-- first (two or more); returns the position (1 .. #candidates) of the one
-- evicted to load `loading`.
function evict_adapter(loading, candidates, now_us, instance)
  return #candidates
end
