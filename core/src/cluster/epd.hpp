// Encoder disaggregation (E/P/D; docs/epd.md): an encode pool beside the
// P/D pools. After a request's decode instance is chosen and the P/D
// decider has spoken, the encode decider (an encode-decider plugin: never,
// always, multimodal, a Lua script or a library) says whether the request
// goes through the encode pool; if so the cluster's router picks an encode
// instance. The encode takes no time and no instance work (HEAD's "option
// A"): the choice moves the router's state (its round-robin position, its
// scorers' memories) and, when no encode instance takes traffic, rejects
// the request.
#pragma once

#include <blis/plugin.h>
#include <blis/workload.hpp>

#include <cstdint>

namespace blis {

// The encode pool's role bit, beside kPdPrefill and kPdDecode (engine/request.hpp).
inline constexpr uint8_t kPdEncode = 4;

// The encode decider's question about `r`: `view` is its request view,
// `encoders` the encode instances taking traffic, `encoded` the requests
// sent through the encode pool so far.
inline blis_encode_input encode_input(const WorkloadRequest& r, const blis_request_view* view, int64_t now,
                                      int64_t encoders, int64_t encoded) {
  return blis_encode_input{sizeof(blis_encode_input), 0, now, view, r.image_tokens, r.audio_tokens,
                           r.video_tokens, encoders, encoded};
}

}  // namespace blis
