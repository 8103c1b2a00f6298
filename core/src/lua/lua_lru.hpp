// `lru_set` for scripts (lua_lru.cpp): the functions the bootstrap calls
// through FFI. kLruApiDeclaration and LruApi must describe the same layout.
#pragma once

#include "lua/lua_host.hpp"

#include <cstdint>

namespace blis::lua {

struct LruApi {
  void* (*make)(void* core, double capacity);  // nullptr: bad capacity or over the heap limit
  bool (*contains)(void* set, uint64_t key);
  int32_t (*touch)(void* set, uint64_t key);   // 1: over the heap limit
  int32_t (*count)(void* set);
  void (*release)(void* set);
  int32_t (*add_anonymous)(void* set, double count);  // 1: over the heap limit; 2: bad count
};

inline constexpr const char* kLruApiDeclaration = R"(
typedef struct blis_lua_lru_api {
  void* (*make)(void*, double);
  bool (*contains)(void*, uint64_t);
  int32_t (*touch)(void*, uint64_t);
  int32_t (*count)(void*);
  void (*release)(void*);
  int32_t (*add_anonymous)(void*, double);
} blis_lua_lru_api;
)";

const LruApi* lru_api();

}  // namespace blis::lua
