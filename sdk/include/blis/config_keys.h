/*
 * blis/config_keys.h -- the configuration keys the host writes for plugins.
 *
 * One name for each key, shared by the host (which fills a plugin's
 * blis_config) and by plugins (which read it), so a misspelt key is a
 * compile error instead of a silently missing value. Plain C, no types: each
 * macro is the key's string literal. Keys are only ever added.
 *
 * Latency models get the model's architecture ("model.*"), the GPU's figures
 * ("hardware.*") and the parallelism when they declare BLIS_NEED_MODEL /
 * BLIS_NEED_HARDWARE (or when the host has them), the KV block size, and
 * coefficients when there are any. Admission policies get the token-bucket
 * settings when the user gave them, and each SLO class's priority when
 * --slo-priorities (or a policy file's admission.slo_priorities) changed
 * them (GIE's defaults otherwise: critical 4, standard and the default class
 * 3, batch -1, sheddable -2, background -3; negative is sheddable); routing
 * scorers get the block size. Saturation detectors get --max-concurrency,
 * --queue-depth-threshold and --kv-cache-util-threshold (their defaults when
 * not given); dispatch orders get the --slo-targets given, one key per class
 * ("slo_target_us.critical"), and a request's own target in their input.
 */
#ifndef BLIS_CONFIG_KEYS_H
#define BLIS_CONFIG_KEYS_H

#define BLIS_KEY_MODEL_NUM_LAYERS                "model.num_layers"
#define BLIS_KEY_MODEL_HIDDEN_SIZE               "model.hidden_size"
#define BLIS_KEY_MODEL_NUM_HEADS                 "model.num_heads"
#define BLIS_KEY_MODEL_NUM_KV_HEADS              "model.num_kv_heads"
#define BLIS_KEY_MODEL_INTERMEDIATE_SIZE         "model.intermediate_size"
#define BLIS_KEY_MODEL_VOCAB_SIZE                "model.vocab_size"
#define BLIS_KEY_MODEL_BYTES_PER_PARAM           "model.bytes_per_param"
#define BLIS_KEY_MODEL_NUM_EXPERTS               "model.num_experts"
#define BLIS_KEY_MODEL_EXPERTS_PER_TOKEN         "model.experts_per_token"
#define BLIS_KEY_MODEL_MOE_INTERMEDIATE_SIZE     "model.moe_intermediate_size"
#define BLIS_KEY_MODEL_SHARED_EXPERT_DIM         "model.shared_expert_dim"
#define BLIS_KEY_MODEL_INTERMEDIATE_SIZE_MLP     "model.intermediate_size_mlp"
#define BLIS_KEY_MODEL_INTERLEAVE_MOE_LAYER_STEP "model.interleave_moe_layer_step"
#define BLIS_KEY_MODEL_WEIGHT_BYTES_PER_PARAM    "model.weight_bytes_per_param"
#define BLIS_KEY_MODEL_HEAD_DIM                  "model.head_dim"
#define BLIS_KEY_HARDWARE_NAME                   "hardware.name"
#define BLIS_KEY_HARDWARE_TFLOPS_PEAK            "hardware.tflops_peak"
#define BLIS_KEY_HARDWARE_TFLOPS_FP8             "hardware.tflops_fp8"
#define BLIS_KEY_HARDWARE_BW_PEAK_TBS            "hardware.bw_peak_tbs"
#define BLIS_KEY_HARDWARE_MFU_PREFILL            "hardware.mfu_prefill"
#define BLIS_KEY_HARDWARE_MFU_DECODE             "hardware.mfu_decode"
#define BLIS_KEY_HARDWARE_MEMORY_GIB             "hardware.memory_gib"
#define BLIS_KEY_TP                              "tp"
#define BLIS_KEY_DP                              "dp"
#define BLIS_KEY_MOE_COMM_BACKEND                "moe_comm_backend"
#define BLIS_KEY_ENABLE_EXPERT_PARALLEL          "enable_expert_parallel"
#define BLIS_KEY_BLOCK_SIZE                      "block_size"
#define BLIS_KEY_ALPHA_COEFFS                    "alpha_coeffs"
#define BLIS_KEY_BETA_COEFFS                     "beta_coeffs"
#define BLIS_KEY_TOKEN_BUCKET_CAPACITY           "token_bucket_capacity"
#define BLIS_KEY_TOKEN_BUCKET_REFILL_RATE        "token_bucket_refill_rate"
#define BLIS_KEY_MAX_CONCURRENCY                 "max_concurrency"
#define BLIS_KEY_QUEUE_DEPTH_THRESHOLD           "queue_depth_threshold"
#define BLIS_KEY_KV_CACHE_UTIL_THRESHOLD         "kv_cache_util_threshold"
#define BLIS_KEY_SLO_TARGET_US_PREFIX            "slo_target_us."
#define BLIS_KEY_SLO_PRIORITY_CRITICAL           "slo_priority.critical"
#define BLIS_KEY_SLO_PRIORITY_STANDARD           "slo_priority.standard"
#define BLIS_KEY_SLO_PRIORITY_BATCH              "slo_priority.batch"
#define BLIS_KEY_SLO_PRIORITY_SHEDDABLE          "slo_priority.sheddable"
#define BLIS_KEY_SLO_PRIORITY_BACKGROUND         "slo_priority.background"

#endif /* BLIS_CONFIG_KEYS_H */
