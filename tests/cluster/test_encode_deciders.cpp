// The built-in encode deciders of E/P/D (docs/epd.md), plugins of the
// registry (plugins/encode/): whom they send through the encode pool.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"
#include "cluster/epd.hpp"

using namespace blis;
using namespace blis::test;

namespace {

bool encodes(const std::string& name, const WorkloadRequest& r) {
  ConfigTable c;
  blis_request_view view{};
  view.struct_size = sizeof(view);
  view.input_tokens = r.input_tokens;
  return builtin_registries().encode.create(name, CreateArgs{&c, 42})->encode(encode_input(r, &view, 0, 1, 0));
}

}  // namespace

TEST_CASE("encode deciders: never, always, multimodal", "[epd]") {
  WorkloadRequest text, image, audio, video;
  image.image_tokens = 576;
  audio.audio_tokens = 10;
  video.video_tokens = 1;
  CHECK(multimodal(image));
  CHECK_FALSE(multimodal(text));
  for (const WorkloadRequest* r : {&text, &image, &audio, &video}) {
    CHECK_FALSE(encodes("never", *r));
    CHECK(encodes("always", *r));
  }
  CHECK_FALSE(encodes("multimodal", text));
  CHECK(encodes("multimodal", image));
  CHECK(encodes("multimodal", audio));
  CHECK(encodes("multimodal", video));
  CHECK_FALSE(builtin_registries().encode.contains("sometimes"));
}
