-- media-heavy: an encode decider for E/P/D, in Lua (docs/epd.md).
--
-- The built-in `multimodal` decider sends every request with any image,
-- audio or video token through the encode pool. This one sends only those
-- whose media tokens reach `min_media_tokens` (a small thumbnail is left to
-- the prefill instance), and none while no encode instance takes traffic
-- (instead of refusing the request).
--
--   blis run ... --prefill-instances 1 --decode-instances 2 --encode-instances 1 \
--     --encode-decider media-heavy --plugin-config media-heavy.min_media_tokens=1024
kind = "encode-decider"
summary = "media tokens >= min_media_tokens go through the encode pool (example script)"
version = "1.0"

local min_media_tokens = 512

function init(config)
  if config.min_media_tokens ~= nil then min_media_tokens = config.min_media_tokens end
  if min_media_tokens < 1 then error("min_media_tokens must be >= 1") end
end

-- encode_request(image, audio, video, encoders, encoded): the request's
-- media tokens, the encode instances taking traffic, the requests encoded
-- so far; `request` is the request view. true: through the encode pool.
function encode_request(image, audio, video, encoders, encoded)
  if encoders == 0 then return false end
  return image + audio + video >= min_media_tokens
end
