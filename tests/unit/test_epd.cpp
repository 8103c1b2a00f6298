// The encode deciders of E/P/D (docs/epd.md): their names and whom they send
// through the encode pool.
#include "catch.hpp"

#include "cluster/epd.hpp"

using namespace blis;

TEST_CASE("encode deciders: names, and never, always, multimodal", "[epd]") {
  EncodeDecider d = EncodeDecider::Always;
  CHECK(parse_encode_decider("never", d));
  CHECK(d == EncodeDecider::Never);
  CHECK(parse_encode_decider("multimodal", d));
  CHECK(d == EncodeDecider::Multimodal);
  CHECK(parse_encode_decider("always", d));
  CHECK(d == EncodeDecider::Always);
  CHECK_FALSE(parse_encode_decider("Always", d));
  CHECK_FALSE(parse_encode_decider("", d));

  WorkloadRequest text, image;
  image.multimodal = true;
  CHECK_FALSE(should_encode(EncodeDecider::Never, image));
  CHECK(should_encode(EncodeDecider::Always, text));
  CHECK(should_encode(EncodeDecider::Multimodal, image));
  CHECK_FALSE(should_encode(EncodeDecider::Multimodal, text));
}
