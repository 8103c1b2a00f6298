#include "metrics/trace_recorder.hpp"

#include <algorithm>

namespace blis {

std::vector<TraceRecorder::Entry> TraceRecorder::entries() const {
  std::vector<Entry> out = entries_;
  std::stable_sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.spec.arrival_us != b.spec.arrival_us ? a.spec.arrival_us < b.spec.arrival_us : a.spec.id < b.spec.id;
  });
  return out;
}

}  // namespace blis
