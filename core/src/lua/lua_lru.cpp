// The host side of `lru_set` and `prefix_memo` (docs/lua.md): an LRU set of
// 64-bit keys, and a copy of a request's leading block hashes, that scripts
// reach through FFI function pointers handed to the bootstrap (lua_vm.cpp),
// never through a pointer of their own. Their memory counts against the VM's
// Lua heap limit like the script's own tables.
#include "lua/lua_lru.hpp"

#include <blis/lru_hash_set.hpp>

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

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

// touch() of keys[from], ..., keys[to - 1] in order (the bootstrap checked
// the range against the view's count): 0 done; 1 refused at some key, over
// the heap limit (the keys before it are touched, as one by one).
int32_t lru_touch_run(void* p, const uint64_t* keys, int32_t from, int32_t to) {
  sdk::LruHashSet& set = static_cast<LuaLru*>(p)->set;
  for (int32_t k = from; k < to; ++k)  // a held key never grows the set
    if (!set.refresh(keys[k]) && lru_touch(p, keys[k]) != 0) return 1;
  return 0;
}

// The first k in [from, to) whose key the set does not hold, or `to`.
int32_t lru_leading(void* p, const uint64_t* keys, int32_t from, int32_t to) {
  const sdk::LruHashSet& set = static_cast<LuaLru*>(p)->set;
  int32_t k = from;
  while (k < to && set.contains(keys[k])) ++k;
  return k;
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

// prefix_memo: the leading hashes of one request, to compare the next with.
struct LuaMemo {
  VmCore* core;
  size_t charged = 0;  // bytes counted in core->heap_bytes
  std::vector<uint64_t> hashes;
};

void* memo_make(void* core_ptr) {
  auto* core = static_cast<VmCore*>(core_ptr);
  if (!may_grow(*core, sizeof(LuaMemo))) return nullptr;
  auto* memo = new (std::nothrow) LuaMemo{core, sizeof(LuaMemo), {}};
  if (memo != nullptr) core->heap_bytes += memo->charged;
  return memo;
}

// How many of keys[0], ..., keys[to - 1] equal the memo's, from the first.
int32_t memo_common(void* p, const uint64_t* keys, int32_t to) {
  const std::vector<uint64_t>& held = static_cast<LuaMemo*>(p)->hashes;
  const int32_t n = std::min(to, static_cast<int32_t>(held.size()));
  int32_t k = 0;
  while (k < n && keys[k] == held[static_cast<size_t>(k)]) ++k;
  return k;
}

// The memo becomes keys[0..to): 0 done; 1 refused, over the heap limit.
int32_t memo_remember(void* p, const uint64_t* keys, int32_t to) {
  auto& memo = *static_cast<LuaMemo*>(p);
  const size_t want = static_cast<size_t>(to);
  if (want > memo.hashes.capacity()) {
    const size_t more = (want - memo.hashes.capacity()) * sizeof(uint64_t);
    if (!may_grow(*memo.core, more)) return 1;
    memo.hashes.reserve(want);
    const size_t now = sizeof(LuaMemo) + memo.hashes.capacity() * sizeof(uint64_t);
    memo.core->heap_bytes = memo.core->heap_bytes - memo.charged + now;
    memo.charged = now;
  }
  memo.hashes.assign(keys, keys + to);
  return 0;
}

int32_t memo_length(void* p) { return static_cast<int32_t>(static_cast<LuaMemo*>(p)->hashes.size()); }

void memo_release(void* p) {
  auto* memo = static_cast<LuaMemo*>(p);
  memo->core->heap_bytes -= memo->charged;
  delete memo;
}

constexpr LruApi kApi{lru_make,          lru_contains,  lru_touch,   lru_count, lru_release,
                      lru_add_anonymous, lru_touch_run, lru_leading, memo_make, memo_common,
                      memo_remember,     memo_length,   memo_release};

}  // namespace

const LruApi* lru_api() { return &kApi; }

}  // namespace blis::lua
