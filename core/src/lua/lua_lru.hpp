// `lru_set` and `prefix_memo` for scripts (lua_lru.cpp): the functions the bootstrap calls
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
  // keys[from..to) touched in order; 1: over the heap limit.
  int32_t (*touch_run)(void* set, const uint64_t* keys, int32_t from, int32_t to);
  // The first k in [from, to) with keys[k] not held, or to.
  int32_t (*leading)(void* set, const uint64_t* keys, int32_t from, int32_t to);
  // prefix_memo: nullptr over the heap limit; common and remember as in lua_lru.cpp.
  void* (*memo_make)(void* core);
  int32_t (*memo_common)(void* memo, const uint64_t* keys, int32_t to);
  int32_t (*memo_remember)(void* memo, const uint64_t* keys, int32_t to);  // 1: over the heap limit
  int32_t (*memo_length)(void* memo);
  void (*memo_release)(void* memo);
};

inline constexpr const char* kLruApiDeclaration = R"(
typedef struct blis_lua_lru_api {
  void* (*make)(void*, double);
  bool (*contains)(void*, uint64_t);
  int32_t (*touch)(void*, uint64_t);
  int32_t (*count)(void*);
  void (*release)(void*);
  int32_t (*add_anonymous)(void*, double);
  int32_t (*touch_run)(void*, const uint64_t*, int32_t, int32_t);
  int32_t (*leading)(void*, const uint64_t*, int32_t, int32_t);
  void* (*memo_make)(void*);
  int32_t (*memo_common)(void*, const uint64_t*, int32_t);
  int32_t (*memo_remember)(void*, const uint64_t*, int32_t);
  int32_t (*memo_length)(void*);
  void (*memo_release)(void*);
} blis_lua_lru_api;
)";

const LruApi* lru_api();

}  // namespace blis::lua
