// The readers of the fleet's record settings (blis/fleet_settings.hpp):
// --lifecycle and a pool's own lifecycle keys, --autoscaler, --node-pool.
// Each reads a record's text through the one tokenizer into its struct by a
// table of rows (config/record_fields.hpp); the settings table calls them
// when a record is given, so a configuration holds the structs.
#pragma once

#include <blis/fleet_settings.hpp>
#include <blis/record_place.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace blis {

// "key=value ..." into the keys given. Each message names the place of the
// field it is about (`place`: the record's, and its fields' own where they
// have one).
LifecycleSettings parse_lifecycle(const std::string& text, const RecordPlace& place);
AutoscalerSettings parse_autoscaler(const std::string& text, const RecordPlace& place);
// "name=... gpu_type=... gpus_per_node=8 ..." (a --node-pool text).
NodePoolConfig parse_node_pool(const std::string& text, const RecordPlace& place);

// The keys of each record, in their rows' order (docs and tests check them).
std::vector<std::string_view> lifecycle_keys();
std::vector<std::string_view> autoscaler_keys();
std::vector<std::string_view> node_pool_keys();

}  // namespace blis
