// How host data reaches Lua scripts: each global (scores, instances,
// entries, request, route, batch) is a view, a small host-owned struct that
// the bootstrap (lua_vm.cpp) gives a metatable checking every index against
// the view's count. The addresses are integers, not pointers, so a script
// (which has no ffi) cannot turn a view back into raw memory access. The
// structs below and kViewDeclarations must describe the same layout.
#pragma once

#include <blis/plugin.h>

#include <cstddef>
#include <cstdint>

namespace blis::lua {

// An array of `count` elements at `data` (scores, instances, entries, block hashes).
struct ArrayView {
  uintptr_t data = 0;
  int32_t count = 0;
  int32_t reserved = 0;

  template <class T>
  void set(const T* p, int64_t n) {
    data = reinterpret_cast<uintptr_t>(p);
    count = static_cast<int32_t>(n);
  }
};

// A request: its fields, with block_hashes as a view of num_blocks hashes and
// the strings as Lua strings.
struct RequestView {
  uintptr_t data = 0;  // const blis_request_view *
  ArrayView hashes;

  void set(const blis_request_view* r) {
    data = reinterpret_cast<uintptr_t>(r);
    hashes.set(r->block_hashes, r->block_hashes == nullptr ? 0 : r->num_blocks);
  }
};

// A route input: its fields, with `request` and `instances` as the views above.
struct RouteView {
  uintptr_t data = 0;       // const blis_route_input *
  uintptr_t request = 0;    // const RequestView *
  uintptr_t instances = 0;  // const ArrayView *
};

// A step batch: its fields, with `entries` as an array view.
struct BatchView {
  uintptr_t data = 0;     // const blis_step_batch *
  uintptr_t entries = 0;  // const ArrayView *
};

// The fields are const to scripts: only the host moves a view.
inline constexpr const char* kViewDeclarations = R"(
typedef struct blis_lua_scores { const uintptr_t _p; const int32_t _n; const int32_t _r; } blis_lua_scores;
typedef struct blis_lua_instances { const uintptr_t _p; const int32_t _n; const int32_t _r; } blis_lua_instances;
typedef struct blis_lua_entries { const uintptr_t _p; const int32_t _n; const int32_t _r; } blis_lua_entries;
typedef struct blis_lua_hashes { const uintptr_t _p; const int32_t _n; const int32_t _r; } blis_lua_hashes;
typedef struct blis_lua_request { const uintptr_t _p; const blis_lua_hashes _hashes; } blis_lua_request;
typedef struct blis_lua_route { const uintptr_t _p; const uintptr_t _request; const uintptr_t _instances; } blis_lua_route;
typedef struct blis_lua_batch { const uintptr_t _p; const uintptr_t _entries; } blis_lua_batch;
typedef struct blis_lua_variants { const uintptr_t _p; const int32_t _n; const int32_t _r; } blis_lua_variants;
)";

static_assert(sizeof(ArrayView) == 16 && offsetof(ArrayView, count) == 8);
static_assert(sizeof(RequestView) == 24 && offsetof(RequestView, hashes) == 8);
static_assert(sizeof(RouteView) == 24 && offsetof(RouteView, instances) == 16);
static_assert(sizeof(BatchView) == 16 && offsetof(BatchView, entries) == 8);

}  // namespace blis::lua
