// The plugin ABI, frozen by test: the layout of every blis_* struct, and a
// hash of the declarations between BLIS_FFI_BEGIN and BLIS_FFI_END in
// sdk/include/blis/plugin.h (the text LuaJIT's FFI parses too). An edit of
// the contract that does not bump the ABI version fails here.
#include "catch.hpp"

#include "lua/lua_host.hpp"

#include <blis/plugin.h>

#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

// The declarations without comments, whitespace runs collapsed: comments may
// be improved freely, declarations may not change without a version bump.
std::string normalised_declarations(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

struct FrozenAbi {
  int major, minor;
  uint64_t ffi_hash;
};

// One row per released ABI version. Never edit a row: a new minor adds one.
constexpr FrozenAbi kFrozen[] = {
    {1, 1, 0x29259544da36d347ull},
    {1, 2, 0xa9cb54f39bd7611eull},
    {1, 3, 0x880e8a2cfff766bbull},
    {1, 4, 0xd4bcae32162a3162ull},
    {1, 5, 0x59522abd4e384489ull},
    {1, 6, 0x1d9bf17fce10929aull},
    {1, 7, 0xbd9aa0217e295829ull},
    {1, 8, 0x1b22e8ad05c71005ull},
    {1, 9, 0x5af0cfd4f38213e0ull},
    {1, 10, 0xfb631f2c2411d61eull},
    {1, 12, 0x78f9139ef850755bull},
    {1, 13, 0xac1401c1ad1a8d89ull},
    {1, 14, 0xc4a7676861da7ce9ull},
    {1, 15, 0xd5f21569eb1f8b59ull},
};

}  // namespace

TEST_CASE("the FFI section of plugin.h matches the hash stored for this ABI version", "[plugin]") {
  const uint64_t hash = fnv1a(normalised_declarations(blis::lua::ffi_declarations()));
  const FrozenAbi* row = nullptr;
  for (const auto& f : kFrozen)
    if (f.major == BLIS_ABI_MAJOR && f.minor == BLIS_ABI_MINOR) row = &f;
  const std::string fix = fmt::format(
      "If the change only appends (struct fields at the end, enum members, kinds), bump "
      "BLIS_ABI_MINOR in plugin.h, list the new minor in sdk/README.md (\"Minor versions so "
      "far\") and add the row {{{}, <new minor>, 0x{:x}ull}} to kFrozen in "
      "tests/plugin/test_abi_freeze.cpp; anything else bumps BLIS_ABI_MAJOR. Update the "
      "layout static_asserts there too.",
      BLIS_ABI_MAJOR, hash);
  INFO("ABI " << BLIS_ABI_MAJOR << "." << BLIS_ABI_MINOR << ", FFI section hash 0x" << std::hex << hash);
  if (row == nullptr) FAIL("no stored hash for this ABI version. " + fix);
  if (row->ffi_hash != hash)
    FAIL("the declarations between BLIS_FFI_BEGIN and BLIS_FFI_END changed without an ABI "
         "version bump. " + fix);
  SUCCEED();
}

// LP64 layout (Linux x86-64 and aarch64), the platforms blis builds for.
static_assert(sizeof(void*) == 8, "update the frozen layout below for this platform");

static_assert(BLIS_KIND_LATENCY_MODEL == 1 && BLIS_KIND_ROUTING_SCORER == 2 &&
              BLIS_KIND_ADMISSION_POLICY == 3);
static_assert(BLIS_NEED_MODEL == 1 && BLIS_NEED_HARDWARE == 2 && BLIS_NEED_COEFFICIENTS == 4 &&
              BLIS_NEED_PREFIX_CACHE == 8 && BLIS_NEED_DECLARED_READS == 16 && BLIS_NEED_SNAPSHOTS == 32 &&
              BLIS_NEED_REQUEST == 64);
static_assert(BLIS_OK == 0 && BLIS_ERROR == 1 && BLIS_DECLINED == 2);
static_assert(BLIS_CONFIG_OK == 0 && BLIS_CONFIG_MISSING == 1 && BLIS_CONFIG_WRONG_TYPE == 2);
static_assert(BLIS_LOG_DEBUG == 0 && BLIS_LOG_INFO == 1 && BLIS_LOG_WARN == 2 && BLIS_LOG_ERROR == 3);
static_assert(BLIS_SLO_DEFAULT == 0 && BLIS_SLO_CRITICAL == 1 && BLIS_SLO_STANDARD == 2 &&
              BLIS_SLO_SHEDDABLE == 3 && BLIS_SLO_BATCH == 4 && BLIS_SLO_BACKGROUND == 5);
static_assert(BLIS_PHASE_PREFILL == 0 && BLIS_PHASE_DECODE == 1);

static_assert(sizeof(blis_host) == 64);
static_assert(offsetof(blis_host, struct_size) == 0);
static_assert(offsetof(blis_host, abi_minor) == 4);
static_assert(offsetof(blis_host, ctx) == 8);
static_assert(offsetof(blis_host, config_f64) == 16);
static_assert(offsetof(blis_host, config_i64) == 24);
static_assert(offsetof(blis_host, config_bool) == 32);
static_assert(offsetof(blis_host, config_str) == 40);
static_assert(offsetof(blis_host, config_f64_array) == 48);
static_assert(offsetof(blis_host, log) == 56);
static_assert(sizeof(blis_rng) == 32);
static_assert(offsetof(blis_rng, ctx) == 0);
static_assert(offsetof(blis_rng, next_u64) == 8);
static_assert(offsetof(blis_rng, next_f64) == 16);
static_assert(offsetof(blis_rng, next_below) == 24);
static_assert(sizeof(blis_request_view) == 96);
static_assert(offsetof(blis_request_view, struct_size) == 0);
static_assert(offsetof(blis_request_view, block_size) == 4);
static_assert(offsetof(blis_request_view, id) == 8);
static_assert(offsetof(blis_request_view, arrival_time_us) == 16);
static_assert(offsetof(blis_request_view, input_tokens) == 24);
static_assert(offsetof(blis_request_view, max_output_tokens) == 32);
static_assert(offsetof(blis_request_view, block_hashes) == 40);
static_assert(offsetof(blis_request_view, num_blocks) == 48);
static_assert(offsetof(blis_request_view, slo_class) == 56);
static_assert(offsetof(blis_request_view, reserved0) == 60);
static_assert(offsetof(blis_request_view, slo_class_name) == 64);
static_assert(offsetof(blis_request_view, tenant_id) == 72);
static_assert(offsetof(blis_request_view, own_blocks) == 80);
static_assert(offsetof(blis_request_view, adapter) == 88);
static_assert(sizeof(blis_instance_snapshot) == 72);
static_assert(offsetof(blis_instance_snapshot, index) == 0);
static_assert(offsetof(blis_instance_snapshot, queue_depth) == 4);
static_assert(offsetof(blis_instance_snapshot, batch_size) == 8);
static_assert(offsetof(blis_instance_snapshot, in_flight) == 12);
static_assert(offsetof(blis_instance_snapshot, free_kv_blocks) == 16);
static_assert(offsetof(blis_instance_snapshot, total_kv_blocks) == 24);
static_assert(offsetof(blis_instance_snapshot, kv_utilization) == 32);
static_assert(offsetof(blis_instance_snapshot, cache_hit_rate) == 40);
static_assert(offsetof(blis_instance_snapshot, cached_blocks) == 48);
static_assert(offsetof(blis_instance_snapshot, pool) == 56);
static_assert(offsetof(blis_instance_snapshot, tp) == 60);
static_assert(offsetof(blis_instance_snapshot, adapter_resident) == 64);
static_assert(sizeof(blis_route_input) == 40);
static_assert(offsetof(blis_route_input, struct_size) == 0);
static_assert(offsetof(blis_route_input, snapshot_size) == 4);
static_assert(offsetof(blis_route_input, now_us) == 8);
static_assert(offsetof(blis_route_input, request) == 16);
static_assert(offsetof(blis_route_input, instances) == 24);
static_assert(offsetof(blis_route_input, count) == 32);
static_assert(sizeof(blis_batch_entry) == 40);
static_assert(offsetof(blis_batch_entry, input_tokens) == 0);
static_assert(offsetof(blis_batch_entry, progress) == 8);
static_assert(offsetof(blis_batch_entry, prefill_target) == 16);
static_assert(offsetof(blis_batch_entry, cached_tokens) == 24);
static_assert(offsetof(blis_batch_entry, new_tokens) == 32);
static_assert(offsetof(blis_batch_entry, phase) == 36);
static_assert(sizeof(blis_step_batch) == 32);
static_assert(offsetof(blis_step_batch, struct_size) == 0);
static_assert(offsetof(blis_step_batch, entry_size) == 4);
static_assert(offsetof(blis_step_batch, now_us) == 8);
static_assert(offsetof(blis_step_batch, count) == 16);
static_assert(offsetof(blis_step_batch, entries) == 24);
static_assert(sizeof(blis_decode_batch) == 64);
static_assert(offsetof(blis_decode_batch, struct_size) == 0);
static_assert(offsetof(blis_decode_batch, entry_size) == 4);
static_assert(offsetof(blis_decode_batch, now_us) == 8);
static_assert(offsetof(blis_decode_batch, count) == 16);
static_assert(offsetof(blis_decode_batch, progress_sum) == 24);
static_assert(offsetof(blis_decode_batch, progress_max) == 32);
static_assert(offsetof(blis_decode_batch, input_tokens_sum) == 40);
static_assert(offsetof(blis_decode_batch, others_count) == 48);
static_assert(offsetof(blis_decode_batch, others) == 56);
static_assert(sizeof(blis_latency_model_vtable) == 64);
static_assert(offsetof(blis_latency_model_vtable, struct_size) == 0);
static_assert(offsetof(blis_latency_model_vtable, reserved0) == 4);
static_assert(offsetof(blis_latency_model_vtable, create) == 8);
static_assert(offsetof(blis_latency_model_vtable, destroy) == 16);
static_assert(offsetof(blis_latency_model_vtable, step_time) == 24);
static_assert(offsetof(blis_latency_model_vtable, queueing_time) == 32);
static_assert(offsetof(blis_latency_model_vtable, output_token_time) == 40);
static_assert(offsetof(blis_latency_model_vtable, post_decode_overhead) == 48);
static_assert(offsetof(blis_latency_model_vtable, decode_step_time) == 56);
static_assert(sizeof(blis_routing_scorer_vtable) == 40);
static_assert(offsetof(blis_routing_scorer_vtable, struct_size) == 0);
static_assert(offsetof(blis_routing_scorer_vtable, reserved0) == 4);
static_assert(offsetof(blis_routing_scorer_vtable, create) == 8);
static_assert(offsetof(blis_routing_scorer_vtable, destroy) == 16);
static_assert(offsetof(blis_routing_scorer_vtable, score) == 24);
static_assert(offsetof(blis_routing_scorer_vtable, observe) == 32);
static_assert(sizeof(blis_admission_policy_vtable) == 32);
static_assert(offsetof(blis_admission_policy_vtable, struct_size) == 0);
static_assert(offsetof(blis_admission_policy_vtable, reserved0) == 4);
static_assert(offsetof(blis_admission_policy_vtable, create) == 8);
static_assert(offsetof(blis_admission_policy_vtable, destroy) == 16);
static_assert(offsetof(blis_admission_policy_vtable, admit) == 24);
static_assert(sizeof(blis_scaling_variant) == 64);
static_assert(offsetof(blis_scaling_variant, pool) == 0);
static_assert(offsetof(blis_scaling_variant, count) == 4);
static_assert(offsetof(blis_scaling_variant, room) == 8);
static_assert(offsetof(blis_scaling_variant, above_min) == 12);
static_assert(offsetof(blis_scaling_variant, cost_per_hour) == 16);
static_assert(offsetof(blis_scaling_variant, supply) == 24);
static_assert(offsetof(blis_scaling_variant, demand) == 32);
static_assert(offsetof(blis_scaling_variant, max_supply) == 40);
static_assert(offsetof(blis_scaling_variant, queue_depth) == 48);
static_assert(offsetof(blis_scaling_variant, in_flight) == 56);
static_assert(sizeof(blis_scaling_input) == 40);
static_assert(offsetof(blis_scaling_input, struct_size) == 0);
static_assert(offsetof(blis_scaling_input, variant_size) == 4);
static_assert(offsetof(blis_scaling_input, now_us) == 8);
static_assert(offsetof(blis_scaling_input, pending_supply) == 16);
static_assert(offsetof(blis_scaling_input, variants) == 24);
static_assert(offsetof(blis_scaling_input, count) == 32);
static_assert(sizeof(blis_scaling_decision) == 8);
static_assert(offsetof(blis_scaling_decision, delta) == 4);
static_assert(sizeof(blis_autoscaler_vtable) == 32);
static_assert(offsetof(blis_autoscaler_vtable, create) == 8);
static_assert(offsetof(blis_autoscaler_vtable, destroy) == 16);
static_assert(offsetof(blis_autoscaler_vtable, decide) == 24);
static_assert(sizeof(blis_saturation_detector_vtable) == 32);
static_assert(offsetof(blis_saturation_detector_vtable, create) == 8);
static_assert(offsetof(blis_saturation_detector_vtable, destroy) == 16);
static_assert(offsetof(blis_saturation_detector_vtable, saturation) == 24);
static_assert(BLIS_KIND_SATURATION_DETECTOR == 5 && BLIS_KIND_DISPATCH_ORDER == 6);
static_assert(BLIS_DISPATCH_BY_BAND == 0 && BLIS_DISPATCH_ACROSS_BANDS == 1);
static_assert(sizeof(blis_dispatch_input) == 32);
static_assert(offsetof(blis_dispatch_input, struct_size) == 0);
static_assert(offsetof(blis_dispatch_input, priority) == 4);
static_assert(offsetof(blis_dispatch_input, now_us) == 8);
static_assert(offsetof(blis_dispatch_input, request) == 16);
static_assert(offsetof(blis_dispatch_input, slo_target_us) == 24);
static_assert(sizeof(blis_dispatch_order_vtable) == 32);
static_assert(offsetof(blis_dispatch_order_vtable, scope) == 4);
static_assert(offsetof(blis_dispatch_order_vtable, create) == 8);
static_assert(offsetof(blis_dispatch_order_vtable, destroy) == 16);
static_assert(offsetof(blis_dispatch_order_vtable, key) == 24);
static_assert(BLIS_KIND_ENCODE_DECIDER == 8);
static_assert(sizeof(blis_encode_input) == 64);
static_assert(offsetof(blis_encode_input, now_us) == 8);
static_assert(offsetof(blis_encode_input, request) == 16);
static_assert(offsetof(blis_encode_input, image_tokens) == 24);
static_assert(offsetof(blis_encode_input, encode_instances) == 48);
static_assert(offsetof(blis_encode_input, encoded) == 56);
static_assert(sizeof(blis_encode_decider_vtable) == 32);
static_assert(offsetof(blis_encode_decider_vtable, decide) == 24);
static_assert(BLIS_KIND_FAIRNESS_POLICY == 7);
static_assert(sizeof(blis_fairness_flow) == 32);
static_assert(offsetof(blis_fairness_flow, tenant) == 0);
static_assert(offsetof(blis_fairness_flow, queued) == 8);
static_assert(offsetof(blis_fairness_flow, head_seq) == 16);
static_assert(offsetof(blis_fairness_flow, head) == 24);
static_assert(sizeof(blis_fairness_input) == 40);
static_assert(offsetof(blis_fairness_input, struct_size) == 0);
static_assert(offsetof(blis_fairness_input, flow_size) == 4);
static_assert(offsetof(blis_fairness_input, now_us) == 8);
static_assert(offsetof(blis_fairness_input, priority) == 16);
static_assert(offsetof(blis_fairness_input, last) == 20);
static_assert(offsetof(blis_fairness_input, flows) == 24);
static_assert(offsetof(blis_fairness_input, count) == 32);
static_assert(sizeof(blis_fairness_policy_vtable) == 32);
static_assert(offsetof(blis_fairness_policy_vtable, reserved0) == 4);
static_assert(offsetof(blis_fairness_policy_vtable, create) == 8);
static_assert(offsetof(blis_fairness_policy_vtable, destroy) == 16);
static_assert(offsetof(blis_fairness_policy_vtable, pick) == 24);
static_assert(BLIS_KIND_SHEDDING_POLICY == 9);
static_assert(sizeof(blis_shedding_candidate) == 32);
static_assert(offsetof(blis_shedding_candidate, priority) == 0);
static_assert(offsetof(blis_shedding_candidate, reserved0) == 4);
static_assert(offsetof(blis_shedding_candidate, seq) == 8);
static_assert(offsetof(blis_shedding_candidate, tenant) == 16);
static_assert(offsetof(blis_shedding_candidate, request) == 24);
static_assert(sizeof(blis_shedding_input) == 56);
static_assert(offsetof(blis_shedding_input, struct_size) == 0);
static_assert(offsetof(blis_shedding_input, candidate_size) == 4);
static_assert(offsetof(blis_shedding_input, now_us) == 8);
static_assert(offsetof(blis_shedding_input, priority) == 16);
static_assert(offsetof(blis_shedding_input, reserved0) == 20);
static_assert(offsetof(blis_shedding_input, seq) == 24);
static_assert(offsetof(blis_shedding_input, request) == 32);
static_assert(offsetof(blis_shedding_input, queued) == 40);
static_assert(offsetof(blis_shedding_input, count) == 48);
static_assert(sizeof(blis_shedding_policy_vtable) == 32);
static_assert(offsetof(blis_shedding_policy_vtable, reserved0) == 4);
static_assert(offsetof(blis_shedding_policy_vtable, create) == 8);
static_assert(offsetof(blis_shedding_policy_vtable, destroy) == 16);
static_assert(offsetof(blis_shedding_policy_vtable, victim) == 24);
static_assert(sizeof(blis_adapter_eviction_input) == 48);
static_assert(offsetof(blis_adapter_eviction_input, struct_size) == 0);
static_assert(offsetof(blis_adapter_eviction_input, instance) == 4);
static_assert(offsetof(blis_adapter_eviction_input, now_us) == 8);
static_assert(offsetof(blis_adapter_eviction_input, loading) == 16);
static_assert(offsetof(blis_adapter_eviction_input, candidates) == 24);
static_assert(offsetof(blis_adapter_eviction_input, count) == 32);
static_assert(offsetof(blis_adapter_eviction_input, capacity) == 40);
static_assert(sizeof(blis_adapter_eviction_vtable) == 32);
static_assert(offsetof(blis_adapter_eviction_vtable, reserved0) == 4);
static_assert(offsetof(blis_adapter_eviction_vtable, create) == 8);
static_assert(offsetof(blis_adapter_eviction_vtable, destroy) == 16);
static_assert(offsetof(blis_adapter_eviction_vtable, choose) == 24);
static_assert(sizeof(blis_offload_block) == 16);
static_assert(offsetof(blis_offload_block, hash) == 0);
static_assert(offsetof(blis_offload_block, secondary) == 8);
static_assert(offsetof(blis_offload_block, reserved0) == 12);
static_assert(sizeof(blis_offload_eviction_input) == 48);
static_assert(offsetof(blis_offload_eviction_input, struct_size) == 0);
static_assert(offsetof(blis_offload_eviction_input, candidate_size) == 4);
static_assert(offsetof(blis_offload_eviction_input, now_us) == 8);
static_assert(offsetof(blis_offload_eviction_input, used_blocks) == 16);
static_assert(offsetof(blis_offload_eviction_input, capacity_blocks) == 24);
static_assert(offsetof(blis_offload_eviction_input, candidates) == 32);
static_assert(offsetof(blis_offload_eviction_input, count) == 40);
static_assert(sizeof(blis_offload_eviction_vtable) == 32);
static_assert(offsetof(blis_offload_eviction_vtable, choose) == 24);
static_assert(sizeof(blis_plugin_info) == 48);
static_assert(offsetof(blis_plugin_info, struct_size) == 0);
static_assert(offsetof(blis_plugin_info, kind) == 4);
static_assert(offsetof(blis_plugin_info, name) == 8);
static_assert(offsetof(blis_plugin_info, version) == 16);
static_assert(offsetof(blis_plugin_info, summary) == 24);
static_assert(offsetof(blis_plugin_info, vtable) == 32);
static_assert(offsetof(blis_plugin_info, needs) == 40);
static_assert(offsetof(blis_plugin_info, reserved1) == 44);
static_assert(sizeof(blis_manifest) == 24);
static_assert(offsetof(blis_manifest, abi_major) == 0);
static_assert(offsetof(blis_manifest, abi_minor) == 4);
static_assert(offsetof(blis_manifest, struct_size) == 8);
static_assert(offsetof(blis_manifest, count) == 12);
static_assert(offsetof(blis_manifest, plugins) == 16);
