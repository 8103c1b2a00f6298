// The host side of `lru_set` (docs/lua.md): an LRU set of 64-bit keys that
// scripts reach through FFI function pointers handed to the bootstrap
// (lua_vm.cpp), never through a pointer of their own. Its memory counts
// against the VM's Lua heap limit like the script's own tables.
#include "lua/lua_lru.hpp"

#include <blis/lru_hash_set.hpp>

#include <cmath>
#include <new>

namespace blis::lua {
namespace {

struct LuaLru {
  VmCore* core;
  uint32_t capacity;
  size_t charged = 0;  // bytes counted in core->heap_bytes
  sdk::LruHashSet set;
};

// Whether `bytes` more fit under the heap limit; during a guarded call a
// refusal is recorded, and the call fails with the heap-limit error.
bool may_grow(VmCore& core, size_t bytes) {
  if (core.budget.left == kNoBudget || core.heap_bytes + bytes <= kMemoryLimit) return true;
  core.heap_refused = true;
  return false;
}

void* lru_make(void* core_ptr, double capacity) {
  auto* core = static_cast<VmCore*>(core_ptr);
  if (!(capacity >= 1 && capacity <= 2147483647.0) || capacity != std::floor(capacity)) return nullptr;
  if (!may_grow(*core, sizeof(LuaLru))) return nullptr;
  auto* lru = new (std::nothrow) LuaLru{core, static_cast<uint32_t>(capacity), sizeof(LuaLru), {}};
  if (lru != nullptr) core->heap_bytes += lru->charged;
  return lru;
}

bool lru_contains(void* p, uint64_t key) { return static_cast<LuaLru*>(p)->set.contains(key); }

// 0: done; 1: refused, the set would outgrow the heap limit.
int32_t lru_touch(void* p, uint64_t key) {
  auto& lru = *static_cast<LuaLru*>(p);
  const size_t more = lru.set.growth_bytes(lru.capacity);
  if (more != 0) {
    if (!may_grow(*lru.core, more)) return 1;
    lru.set.touch(key, lru.capacity);
    const size_t now = lru.set.bytes() + sizeof(LuaLru);
    lru.core->heap_bytes = lru.core->heap_bytes - lru.charged + now;
    lru.charged = now;
    return 0;
  }
  lru.set.touch(key, lru.capacity);
  return 0;
}

// 0: done; 1: refused, over the heap limit; 2: not a count.
int32_t lru_add_anonymous(void* p, double count) {
  auto& lru = *static_cast<LuaLru*>(p);
  if (!(count >= 0 && count <= 9007199254740992.0) || count != std::floor(count)) return 2;
  const size_t more = lru.set.anonymous_growth_bytes();
  if (more != 0 && !may_grow(*lru.core, more)) return 1;
  lru.set.add_anonymous(static_cast<uint64_t>(count), lru.capacity);
  const size_t now = lru.set.bytes() + sizeof(LuaLru);
  lru.core->heap_bytes = lru.core->heap_bytes - lru.charged + now;
  lru.charged = now;
  return 0;
}

int32_t lru_count(void* p) { return static_cast<int32_t>(static_cast<LuaLru*>(p)->set.size()); }

void lru_release(void* p) {
  auto* lru = static_cast<LuaLru*>(p);
  lru->core->heap_bytes -= lru->charged;
  delete lru;
}

constexpr LruApi kApi{lru_make, lru_contains, lru_touch, lru_count, lru_release, lru_add_anonymous};

}  // namespace

const LruApi* lru_api() { return &kApi; }

}  // namespace blis::lua
