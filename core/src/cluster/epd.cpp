#include "cluster/epd.hpp"

namespace blis {

bool parse_encode_decider(const std::string& name, EncodeDecider& out) {
  if (name == "never") out = EncodeDecider::Never;
  else if (name == "always") out = EncodeDecider::Always;
  else if (name == "multimodal") out = EncodeDecider::Multimodal;
  else return false;
  return true;
}

bool should_encode(EncodeDecider decider, const WorkloadRequest& r) {
  switch (decider) {
    case EncodeDecider::Never: return false;
    case EncodeDecider::Always: return true;
    case EncodeDecider::Multimodal: return r.multimodal;
  }
  return false;
}

}  // namespace blis
