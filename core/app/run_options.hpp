// Every flag of `blis run`, as parsed (before resolution against defaults).
#pragma once

#include <string>

namespace blis::app {

struct RunOptions {
  std::string model;
};

}  // namespace blis::app
