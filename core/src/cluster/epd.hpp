// Encoder disaggregation (E/P/D; docs/epd.md): an encode pool beside the
// P/D pools. After a request's decode instance is chosen and the P/D
// decider has spoken, the encode decider says whether the request goes
// through the encode pool; if so the cluster's router picks an encode
// instance. The encode takes no time and no instance work (HEAD's "option
// A"): the choice moves the router's state (its round-robin position, its
// scorers' memories) and, when no encode instance takes traffic, rejects
// the request.
#pragma once

#include <blis/workload.hpp>

#include <cstdint>
#include <string>

namespace blis {

// The encode pool's role bit, beside kPdPrefill and kPdDecode (engine/request.hpp).
inline constexpr uint8_t kPdEncode = 4;

enum class EncodeDecider : uint8_t { Never, Always, Multimodal };

// "never", "always", "multimodal"; false for anything else.
bool parse_encode_decider(const std::string& name, EncodeDecider& out);

// Whether `r` goes through the encode pool: multimodal when it carries
// image, audio or video tokens.
bool should_encode(EncodeDecider decider, const WorkloadRequest& r);

}  // namespace blis
