// One pool's text ("name=a100 count=4 hardware=A100-80 tp=2 cost_per_hour=2.2
// min=1 max=8 ..."), the form every writer of pools shares: --pool, a
// scenario's [[pools]] (TOML, Lua) and the policy file's pools. Read here
// once, so that every writer accepts the same keys with the same messages.
#pragma once

#include <blis/settings.hpp>

#include <string>

namespace blis::config {

// Reads one pool's text; `place` names the writer (and each field's own
// place, where it has one). InputError "where: pool 'TEXT': ..." for a
// malformed pair, an unknown key, a bad name, count or cost, or a missing
// name or count, placed at the field it is about; its lifecycle keys' errors
// at "where: pool NAME". The settings' values are left to apply_settings
// (their origin: "where: pool NAME", at the field's place).
PoolSpec read_pool_text(const std::string& text, const RecordPlace& place);

// Whether `key` is one of a pool's lifecycle keys.
bool is_pool_lifecycle_key(const std::string& key);
// Whether `key` may appear in a pool's text at all.
bool is_pool_key(const std::string& key);
// What the message of a key that is not a pool key says.
std::string not_a_pool_key(const std::string& key);

}  // namespace blis::config
