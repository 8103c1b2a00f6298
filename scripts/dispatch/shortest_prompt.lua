-- shortest-prompt: a dispatch order for the gateway's flow control, in Lua.
--
-- While the saturation detector holds the gateway queue (--flow-control,
-- docs/gateway.md), requests pile up; when one may leave, the dispatch order
-- says which. The built-in `priority` order sends the most urgent band
-- first and, within it, each tenant's requests in arrival order. This one
-- keeps the bands and the fairness policy but sends the shortest prompt of
-- the picked tenant first (shortest-job-first on the prefill): short chats
-- do not wait behind long documents, and the mean TTFT falls. Long prompts
-- can wait long under sustained load: pair it with --request-ttl or use
-- `max_wait_us` below to age them.
--
--   blis run --model qwen/qwen3-14b --rate 40 --num-requests 400 --flow-control \
--     --saturation-detector concurrency --max-concurrency 8 --dispatch-order shortest_prompt.lua
kind = "dispatch-order"
summary = "shortest prompt first within a band, aged by max_wait_us (example script)"
version = "1.0"

-- "band": the most urgent band allowed to send, the tenant flow the
-- fairness policy picks, and in it the lowest key. ("across-bands": the
-- lowest key of every band allowed, as the built-in fifo.)
scope = "band"

-- Aging: a prompt of max_tokens tokens weighs as much as max_wait_us of
-- waiting, so a long prompt is not held forever. 0 = pure shortest first.
local max_wait_us = 0
local max_tokens = 8192

function init(config)
  if config.max_wait_us ~= nil then max_wait_us = config.max_wait_us end
  if config.max_tokens ~= nil then max_tokens = config.max_tokens end
  if max_wait_us < 0 or max_tokens <= 0 then
    error("max_wait_us must be >= 0 and max_tokens > 0")
  end
end

-- order_key(priority): called once, as the request enters the queue, with
-- `request` (the request view) and `route.now_us` (now). Lower leaves first;
-- equal keys leave in arrival order.
function order_key(priority)
  local tokens = tonumber(request.input_tokens)
  if max_wait_us == 0 then return tokens end
  -- The time at which the request would be as urgent as a zero-token one
  -- that arrives then.
  return tonumber(route.now_us) + tokens / max_tokens * max_wait_us
end
