// The message of the blis::Error a call throws, for tests of error texts.
#pragma once

#include <blis/errors.hpp>

#include <functional>
#include <string>

namespace blis::test {

// "(no error)" when the call returns normally.
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const blis::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace blis::test
