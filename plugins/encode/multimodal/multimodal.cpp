// multimodal encode decider (BLIS HEAD's): the requests whose prompt carries
// image, audio or video tokens go through the encode pool (docs/epd.md).
#include <blis/plugin.hpp>

namespace {

class Multimodal {
 public:
  explicit Multimodal(blis::sdk::Context&) {}
  bool encode(const blis_encode_input& in) {
    return in.image_tokens > 0 || in.audio_tokens > 0 || in.video_tokens > 0;
  }
};

}  // namespace

BLIS_PLUGINS(blis::sdk::encode_decider<Multimodal>("multimodal", "1.0.0",
                                                   "Requests with image, audio or video tokens go through the "
                                                   "encode pool"))
