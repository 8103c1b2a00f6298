// string.find, string.match, string.gmatch and string.gsub for scripts, with
// Lua 5.1's pattern language (as LuaJIT has it, %g included) and the work
// counted (docs/lua.md "Bounds").
//
// Why not LuaJIT's own: its matcher is a C function that backtracks without
// limit and never returns to the VM while it runs, so neither the count hook
// nor the budget checks written into the script can stop it;
// ("a"):rep(5e4):find(("a*"):rep(40) .. "b") ran for minutes. Here every
// step of the matcher (a pattern item tried, a repetition expanded or given
// back, a byte compared) is counted, and each kStepsPerCharge steps are
// charged to the call's instruction budget with spend_budget, which also
// reads the CPU clock: the call stops at its instruction or CPU limit,
// with the script's line, like any loop of the script.
//
// No C++ object with a destructor lives on these frames: a Lua error
// (lua_error, luaL_error) unwinds through them.
#include "lua/lua_host.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

namespace blis::lua {
namespace {

constexpr int kMaxCaptures = 32;  // LUA_MAXCAPTURES
constexpr int kMaxDepth = 200;    // nested match calls (LuaJIT's limit too): "pattern too complex"
constexpr ptrdiff_t kUnfinished = -1;
constexpr ptrdiff_t kPosition = -2;
constexpr int kStepsPerCharge = 1000;
constexpr char kEsc = '%';
constexpr const char* kSpecials = "^$*+?.([%-";

struct Capture {
  const char* init;
  ptrdiff_t len;  // kUnfinished, kPosition or a length
};

struct Matcher {
  Matcher(lua_State* state, const char* from, const char* to) : L(state), begin(from), end(to) {}
  lua_State* L;
  const char* begin;  // the subject
  const char* end;
  int level = 0;      // captures open or closed
  int depth = 0;
  int countdown = kStepsPerCharge;
  Capture capture[kMaxCaptures];
};

void step(Matcher& m, int n = 1) {
  m.countdown -= n;
  if (m.countdown <= 0) {
    const int spent = kStepsPerCharge - m.countdown;
    m.countdown = kStepsPerCharge;
    spend_budget(m.L, spent);
  }
}

// Charges the steps not charged yet; at the end of each call.
void settle(Matcher& m) {
  if (m.countdown < kStepsPerCharge) spend_budget(m.L, kStepsPerCharge - m.countdown);
  m.countdown = kStepsPerCharge;
}

unsigned char uc(char c) { return static_cast<unsigned char>(c); }

// The character classes, ASCII only as LuaJIT's (the C locale never matters).
bool in_class(int c, int cl) {
  const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
  const bool graph = c > 32 && c < 127;
  bool r = false;
  switch (cl | 0x20) {
    case 'a': r = lower || upper; break;
    case 'c': r = c < 32 || c == 127; break;
    case 'd': r = digit; break;
    case 'g': r = graph; break;
    case 'l': r = lower; break;
    case 'p': r = graph && !lower && !upper && !digit; break;
    case 's': r = c == ' ' || (c >= 9 && c <= 13); break;
    case 'u': r = upper; break;
    case 'w': r = lower || upper || digit; break;
    case 'x': r = digit || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); break;
    case 'z': r = c == 0; break;
    default: return cl == c;
  }
  return (cl >= 'A' && cl <= 'Z') ? !r : r;
}

// Where the single-character class at `p` ends.
const char* class_end(Matcher& m, const char* p) {
  const char c = *p++;
  if (c == kEsc) {
    if (*p == '\0') luaL_error(m.L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (*p == '^') ++p;
    do {  // the first character is a member even if it is ']'
      if (*p == '\0') luaL_error(m.L, "malformed pattern (missing ']')");
      if (*p++ == kEsc && *p != '\0') ++p;
    } while (*p != ']');
    return p + 1;
  }
  return p;
}

// `c` against the set [...] from `p` (at '[') to `last` (at ']').
bool in_set(int c, const char* p, const char* last) {
  bool yes = true;
  if (p[1] == '^') {
    yes = false;
    ++p;
  }
  while (++p < last) {
    if (*p == kEsc) {
      ++p;
      if (in_class(c, uc(*p))) return yes;
    } else if (p[1] == '-' && p + 2 < last) {
      p += 2;
      if (uc(p[-2]) <= c && c <= uc(*p)) return yes;
    } else if (uc(*p) == c) {
      return yes;
    }
  }
  return !yes;
}

bool single(int c, const char* p, const char* ep) {
  switch (*p) {
    case '.': return true;
    case kEsc: return in_class(c, uc(p[1]));
    case '[': return in_set(c, p, ep - 1);
    default: return uc(*p) == c;
  }
}

const char* match(Matcher& m, const char* s, const char* p);

const char* balanced(Matcher& m, const char* s, const char* p) {
  if (p[0] == '\0' || p[1] == '\0') luaL_error(m.L, "unbalanced pattern");
  if (s >= m.end || *s != p[0]) return nullptr;
  int open = 1;
  while (++s < m.end) {
    step(m);
    if (*s == p[1]) {
      if (--open == 0) return s + 1;
    } else if (*s == p[0]) {
      ++open;
    }
  }
  return nullptr;
}

// item* and item+: the most repetitions first, giving back one at a time.
const char* longest(Matcher& m, const char* s, const char* p, const char* ep) {
  ptrdiff_t i = 0;
  while (s + i < m.end && single(uc(s[i]), p, ep)) {
    step(m);
    ++i;
  }
  for (; i >= 0; --i) {
    step(m);
    if (const char* r = match(m, s + i, ep + 1)) return r;
  }
  return nullptr;
}

// item-: the fewest repetitions first.
const char* shortest(Matcher& m, const char* s, const char* p, const char* ep) {
  for (;;) {
    step(m);
    if (const char* r = match(m, s, ep + 1)) return r;
    if (s < m.end && single(uc(*s), p, ep))
      ++s;
    else
      return nullptr;
  }
}

const char* open_capture(Matcher& m, const char* s, const char* p, ptrdiff_t what) {
  if (m.level >= kMaxCaptures) luaL_error(m.L, "too many captures");
  m.capture[m.level] = Capture{s, what};
  ++m.level;
  const char* r = match(m, s, p);
  if (r == nullptr) --m.level;
  return r;
}

const char* close_capture(Matcher& m, const char* s, const char* p) {
  int l = m.level - 1;
  while (l >= 0 && m.capture[l].len != kUnfinished) --l;
  if (l < 0) luaL_error(m.L, "invalid pattern capture");
  m.capture[l].len = s - m.capture[l].init;
  const char* r = match(m, s, p);
  if (r == nullptr) m.capture[l].len = kUnfinished;
  return r;
}

// %1 .. %9 inside a pattern: the text of that capture again.
const char* same_as_capture(Matcher& m, const char* s, int digit) {
  const int l = digit - '1';
  if (l < 0 || l >= m.level || m.capture[l].len == kUnfinished) luaL_error(m.L, "invalid capture index");
  const ptrdiff_t len = m.capture[l].len;
  if (len < 0 || m.end - s < len) return nullptr;  // a position capture matches no text
  step(m, static_cast<int>(len / 64));
  return std::memcmp(m.capture[l].init, s, static_cast<size_t>(len)) == 0 ? s + len : nullptr;
}

// %f[set] with `p` at '[': where the pattern goes on when `s` stands on the
// frontier (the byte before it not in the set, the byte at it in the set),
// else nullptr.
inline const char* frontier(Matcher& m, const char* s, const char* p) {
  if (*p != '[') luaL_error(m.L, "missing '[' after '%%f' in pattern");
  const char* ep = class_end(m, p);
  const int before = s == m.begin ? 0 : uc(s[-1]);
  const int here = s < m.end ? uc(*s) : 0;
  if (in_set(before, p, ep - 1) || !in_set(here, p, ep - 1)) return nullptr;
  return ep;
}

// What a pattern item starting with '%' did: matched (s and p moved past
// it), failed, or was a character class, for the caller to match.
enum class EscapeItem { kMatched, kFailed, kClass };

// %bxy, %f[set] and %1-%9 at `p`.
inline EscapeItem escape_item(Matcher& m, const char*& s, const char*& p) {
  if (p[1] == 'b') {
    s = balanced(m, s, p + 2);
    if (s == nullptr) return EscapeItem::kFailed;
    p += 4;
    return EscapeItem::kMatched;
  }
  if (p[1] == 'f') {
    p = frontier(m, s, p + 2);
    return p == nullptr ? EscapeItem::kFailed : EscapeItem::kMatched;
  }
  if (p[1] >= '0' && p[1] <= '9') {
    s = same_as_capture(m, s, uc(p[1]));
    if (s == nullptr) return EscapeItem::kFailed;
    p += 2;
    return EscapeItem::kMatched;
  }
  return EscapeItem::kClass;
}

const char* match_here(Matcher& m, const char* s, const char* p) {
  for (;;) {
    step(m);
    switch (*p) {
      case '\0': return s;
      case '(':
        return p[1] == ')' ? open_capture(m, s, p + 2, kPosition) : open_capture(m, s, p + 1, kUnfinished);
      case ')': return close_capture(m, s, p + 1);
      case '$':
        if (p[1] == '\0') return s == m.end ? s : nullptr;
        break;
      case kEsc:
        switch (escape_item(m, s, p)) {
          case EscapeItem::kMatched: continue;
          case EscapeItem::kFailed: return nullptr;
          case EscapeItem::kClass: break;
        }
        break;
      default: break;
    }
    // A single-character class, perhaps with a repetition.
    const char* ep = class_end(m, p);
    const bool hit = s < m.end && single(uc(*s), p, ep);
    switch (*ep) {
      case '?':
        if (hit) {
          if (const char* r = match(m, s + 1, ep + 1)) return r;
        }
        p = ep + 1;
        continue;
      case '*': return longest(m, s, p, ep);
      case '+': return hit ? longest(m, s + 1, p, ep) : nullptr;
      case '-': return shortest(m, s, p, ep);
      default:
        if (!hit) return nullptr;
        ++s;
        p = ep;
        continue;
    }
  }
}

const char* match(Matcher& m, const char* s, const char* p) {
  if (++m.depth > kMaxDepth) luaL_error(m.L, "pattern too complex");
  const char* r = match_here(m, s, p);
  --m.depth;
  return r;
}

// Pushes capture `i` (or the whole match s .. e when the pattern has none).
void push_capture(Matcher& m, int i, const char* s, const char* e) {
  if (i >= m.level) {
    if (i != 0) luaL_error(m.L, "invalid capture index");
    lua_pushlstring(m.L, s, static_cast<size_t>(e - s));  // +1
    return;
  }
  const Capture& c = m.capture[i];
  if (c.len == kUnfinished) luaL_error(m.L, "unfinished capture");
  if (c.len == kPosition)
    lua_pushinteger(m.L, c.init - m.begin + 1);  // +1
  else
    lua_pushlstring(m.L, c.init, static_cast<size_t>(c.len));  // +1
}

// Pushes every capture (or the whole match when s != nullptr and the
// pattern has none); returns how many.
int push_captures(Matcher& m, const char* s, const char* e) {
  const int n = (m.level == 0 && s != nullptr) ? 1 : m.level;
  luaL_checkstack(m.L, n, "too many captures");
  for (int i = 0; i < n; ++i) push_capture(m, i, s, e);  // +n
  return n;
}

// A start position argument (1-based, negative from the end) as an offset
// into a subject of `len` bytes, clamped to 0 .. len.
size_t start_offset(lua_State* L, int arg, size_t len) {
  double pos = luaL_optnumber(L, arg, 1);
  if (pos != pos) pos = 1;
  const double n = static_cast<double>(len);
  pos = pos < 0 ? (pos < -n ? 0 : pos + n) : (pos > 0 ? pos - 1 : 0);
  if (pos > n) pos = n;
  return static_cast<size_t>(pos);
}

int find_or_match(lua_State* L, bool find) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const size_t start = start_offset(L, 3, ls);
  Matcher m(L, s, s + ls);
  if (find && (lua_toboolean(L, 4) != 0 || std::strpbrk(p, kSpecials) == nullptr)) {
    // A plain search: glibc's memmem takes time linear in the subject, and
    // a step is counted per 16 bytes it may scan (about what an
    // instruction of the script costs).
    const void* at = memmem(s + start, ls - start, p, lp);
    step(m, static_cast<int>(std::min<size_t>((ls - start) / 16, 1u << 30)));
    settle(m);
    if (at == nullptr) {
      lua_pushnil(L);
      return 1;
    }
    const ptrdiff_t i = static_cast<const char*>(at) - s;
    lua_pushinteger(L, i + 1);
    lua_pushinteger(L, i + static_cast<ptrdiff_t>(lp));
    return 2;
  }
  const bool anchor = *p == '^';
  if (anchor) ++p;
  const char* from = s + start;
  do {
    step(m);
    m.level = 0;
    m.depth = 0;
    if (const char* e = match(m, from, p)) {
      settle(m);
      if (!find) return push_captures(m, from, e);
      lua_pushinteger(L, from - s + 1);  // +1: start
      lua_pushinteger(L, e - s);         // +1: end
      return push_captures(m, nullptr, nullptr) + 2;
    }
  } while (from++ < m.end && !anchor);
  settle(m);
  lua_pushnil(L);
  return 1;
}

int str_find(lua_State* L) { return find_or_match(L, true); }
int str_match(lua_State* L) { return find_or_match(L, false); }

// The iterator of gmatch; upvalues: the subject, the pattern, the offset
// where the next search starts.
int gmatch_next(lua_State* L) {
  size_t ls = 0;
  const char* s = lua_tolstring(L, lua_upvalueindex(1), &ls);
  const char* p = lua_tostring(L, lua_upvalueindex(2));
  const auto offset = static_cast<size_t>(lua_tonumber(L, lua_upvalueindex(3)));
  Matcher m(L, s, s + ls);
  for (const char* from = s + std::min(offset, ls + 1); from <= m.end; ++from) {
    step(m);
    m.level = 0;
    m.depth = 0;
    if (const char* e = match(m, from, p)) {
      // An empty match moves on by one, or the loop would never end.
      lua_pushinteger(L, (e - s) + (e == from ? 1 : 0));  // +1
      lua_replace(L, lua_upvalueindex(3));                // -1
      settle(m);
      return push_captures(m, from, e);
    }
  }
  settle(m);
  return 0;
}

int str_gmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushinteger(L, 0);                    // +1: the offset
  lua_pushcclosure(L, gmatch_next, 3);      // -3 +1
  return 1;
}

// Appends the replacement of the match s .. e to `b`, by the kind of
// argument 3 (a string with %0 .. %9, a table, a function).
void add_replacement(Matcher& m, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = m.L;
  const int kind = lua_type(L, 3);
  if (kind == LUA_TNUMBER || kind == LUA_TSTRING) {
    size_t l = 0;
    const char* r = lua_tolstring(L, 3, &l);
    step(m, static_cast<int>(l / 64));
    for (size_t i = 0; i < l; ++i) {
      if (r[i] != kEsc) {
        luaL_addchar(b, r[i]);
        continue;
      }
      ++i;
      const char c = i < l ? r[i] : '\0';
      if (c < '0' || c > '9') {
        luaL_addchar(b, c);
      } else if (c == '0') {
        luaL_addlstring(b, s, static_cast<size_t>(e - s));
      } else {
        push_capture(m, c - '1', s, e);  // +1
        luaL_addvalue(b);                // -1
      }
    }
    return;
  }
  if (kind == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);                     // +1: the function
    const int n = push_captures(m, s, e);    // +n
    lua_call(L, n, 1);                       // -(n+1) +1: its result
  } else {
    push_capture(m, 0, s, e);  // +1: the key
    lua_gettable(L, 3);        // -1 +1: the value
  }
  if (lua_toboolean(L, -1) == 0) {  // nil or false: keep the match
    lua_pop(L, 1);
    lua_pushlstring(L, s, static_cast<size_t>(e - s));
  } else if (lua_isstring(L, -1) == 0) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);  // -1
}

int str_gsub(lua_State* L) {
  size_t ls = 0;
  const char* src = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checkstring(L, 2);
  const int kind = lua_type(L, 3);
  const double most = luaL_optnumber(L, 4, static_cast<double>(ls) + 1);
  luaL_argcheck(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                "string/function/table expected");
  const bool anchor = *p == '^';
  if (anchor) ++p;
  Matcher m(L, src, src + ls);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  double n = 0;
  while (n < most) {
    step(m);
    m.level = 0;
    m.depth = 0;
    const char* e = match(m, src, p);
    if (e != nullptr) {
      ++n;
      add_replacement(m, &b, src, e);
    }
    if (e != nullptr && e > src)
      src = e;
    else if (src < m.end)
      luaL_addchar(&b, *src++);
    else
      break;
    if (anchor) break;
  }
  luaL_addlstring(&b, src, static_cast<size_t>(m.end - src));
  luaL_pushresult(&b);  // +1: the result
  lua_pushinteger(L, static_cast<lua_Integer>(n));  // +1: the count
  settle(m);
  return 2;
}

}  // namespace

void install_bounded_patterns(lua_State* L) {
  lua_getglobal(L, "string");  // +1
  const std::pair<const char*, lua_CFunction> fns[] = {
      {"find", str_find}, {"match", str_match}, {"gmatch", str_gmatch}, {"gsub", str_gsub}};
  for (const auto& [name, fn] : fns) {
    lua_pushcfunction(L, fn);  // +1
    lua_setfield(L, -2, name);  // -1
  }
  lua_getfield(L, -1, "gfind");  // +1: Lua 5.0's name of gmatch, where it exists
  const bool gfind = !lua_isnil(L, -1);
  lua_pop(L, 1);  // -1
  if (gfind) {
    lua_pushcfunction(L, str_gmatch);
    lua_setfield(L, -2, "gfind");
  }
  lua_pop(L, 1);  // -1: string
}

}  // namespace blis::lua
