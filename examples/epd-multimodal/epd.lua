-- The encode pool's three deciders on a half-multimodal workload
-- (workload.yaml: 200 requests, half with one or two 576-token images), on
-- 1 prefill + 2 decode + 1 encode qwen3-14b H100s, every request split
-- (P/D always), round-robin routing (docs/epd.md):
--   never       the encode pool gets nothing (blis warns);
--   multimodal  requests with images are routed through it;
--   always      every request is.
-- The encode takes no time (as in the reference): what changes is the
-- round-robin position, hence how the decode instances share the work.
--
--   blis run examples/epd-multimodal/epd.lua
return {
  model = "qwen/qwen3-14b",
  workload_spec = "workload.yaml",
  routing_policy = "round-robin",
  prefill_instances = 1,
  decode_instances = 2,
  pd_decider = "always",
  encode_instances = 1,
  sweep = {
    { encode_decider = "never" },
    { encode_decider = "multimodal" },
    { encode_decider = "always" },
  },
}
