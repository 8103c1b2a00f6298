/*
 * blis/plugin.h -- the binary contract between blis and its plugins.
 *
 * C99, depends on <stdint.h> and <stddef.h> only. The declarations between the
 * BLIS_FFI_BEGIN and BLIS_FFI_END markers contain no preprocessor directives and
 * no macros, so LuaJIT's ffi.cdef can parse them verbatim: Lua scripts see the
 * very same structs as shared-library plugins.
 *
 * A plugin library exports one symbol, `blis_plugin_manifest`, of type
 * blis_manifest_fn. It returns a pointer to a static manifest that lists the
 * plugins in the library. The host checks, in this order: the symbol exists,
 * abi_major equals BLIS_ABI_MAJOR, the manifest, every plugin entry and every
 * vtable are at least as large as the host requires, and no plugin name is
 * already registered for its kind.
 *
 * Compatibility rules (see sdk/README.md): a minor version may only append
 * fields at the end of a struct, append members to an enum, or add new kinds.
 * Anything else (removing, reordering, re-typing a field, changing a call's
 * meaning) bumps the major version.
 *
 * Ownership and lifetime:
 *  - Every pointer the host passes into a call is owned by the host and valid
 *    only for the duration of that call, unless stated otherwise below.
 *  - `self` is owned by the plugin: created by create(), released by destroy().
 *  - The manifest, plugin entries, names and vtables are static data of the
 *    library and must stay valid while the library is loaded. The host keeps
 *    the library loaded while any object created from it is alive.
 *  - No C++ exception may cross this boundary: report failures with
 *    BLIS_ERROR and a message written to errbuf (NUL-terminated, truncated
 *    to errlen bytes; the host never reads past errlen either way).
 *
 * Threading: the host calls one object from one thread at a time. Different
 * objects (for example, the same plugin in two simulations of a parallel
 * sweep) may be called concurrently, so plugins must not share mutable global
 * state between objects.
 */
#ifndef BLIS_PLUGIN_H
#define BLIS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* BLIS_FFI_BEGIN */

enum { BLIS_ABI_MAJOR = 1, BLIS_ABI_MINOR = 15 };

/* Plugin kinds. Names used on the command line: latency-model,
 * routing-scorer, admission-policy, autoscaler (ABI 1.4),
 * saturation-detector (ABI 1.9), dispatch-order (ABI 1.10),
 * encode-decider (ABI 1.12), fairness-policy and shedding-policy
 * (ABI 1.13), adapter-eviction (ABI 1.14), offload-eviction (ABI 1.15). */
typedef enum blis_kind {
  BLIS_KIND_LATENCY_MODEL = 1,
  BLIS_KIND_ROUTING_SCORER = 2,
  BLIS_KIND_ADMISSION_POLICY = 3,
  BLIS_KIND_AUTOSCALER = 4,
  BLIS_KIND_SATURATION_DETECTOR = 5,
  BLIS_KIND_DISPATCH_ORDER = 6,
  BLIS_KIND_FAIRNESS_POLICY = 7,
  BLIS_KIND_ENCODE_DECIDER = 8,
  BLIS_KIND_SHEDDING_POLICY = 9,
  BLIS_KIND_ADAPTER_EVICTION = 10,
  BLIS_KIND_OFFLOAD_EVICTION = 11
} blis_kind;

/* What a plugin needs the host to give it (blis_plugin_info.needs, ABI 1.1).
 * The host resolves these before create() and fails the run with a message
 * naming the missing setting when it cannot. A latency model that needs the
 * model and the hardware is analytical: it also gets the KV blocks of the
 * defaults table and a max-model-len derived from the model. */
typedef enum blis_need {
  BLIS_NEED_MODEL = 1,        /* architecture: config keys "model.*" */
  BLIS_NEED_HARDWARE = 2,     /* GPU figures and TP: "hardware.*", "tp" */
  BLIS_NEED_COEFFICIENTS = 4, /* trained "alpha_coeffs"/"beta_coeffs" from the coefficient
                                 table, unless given explicitly */
  BLIS_NEED_PREFIX_CACHE = 8,  /* ABI 1.2, scorers and admission policies: fill
                                  blis_instance_snapshot.cached_blocks */
  /* ABI 1.8, scorers and admission policies: what the plugin reads of its
   * blis_route_input. Without BLIS_NEED_DECLARED_READS it is given every
   * field, as before. With it, the host may leave out what no policy of the
   * run reads: the snapshots' fields other than `index` unless one declares
   * BLIS_NEED_SNAPSHOTS, the request view (NULL) unless one declares
   * BLIS_NEED_REQUEST. `now_us`, `count` and each snapshot's `index` are
   * always given. */
  BLIS_NEED_DECLARED_READS = 16,
  BLIS_NEED_SNAPSHOTS = 32,   /* ABI 1.8: reads blis_route_input.instances beyond `index` */
  BLIS_NEED_REQUEST = 64      /* ABI 1.8: reads blis_route_input.request */
} blis_need;

/* Return value of every fallible call. BLIS_DECLINED (ABI 1.5) only from the
 * optional latency-model call decode_step_time: no exact answer, the host
 * prices the step with step_time instead. */
typedef enum blis_status { BLIS_OK = 0, BLIS_ERROR = 1, BLIS_DECLINED = 2 } blis_status;

/* Result of a configuration lookup. */
typedef enum blis_config_result {
  BLIS_CONFIG_OK = 0,
  BLIS_CONFIG_MISSING = 1,
  BLIS_CONFIG_WRONG_TYPE = 2
} blis_config_result;

typedef enum blis_log_level {
  BLIS_LOG_DEBUG = 0,
  BLIS_LOG_INFO = 1,
  BLIS_LOG_WARN = 2,
  BLIS_LOG_ERROR = 3
} blis_log_level;

/* SLO classes of the workload vocabulary. */
typedef enum blis_slo_class {
  BLIS_SLO_DEFAULT = 0,
  BLIS_SLO_CRITICAL = 1,
  BLIS_SLO_STANDARD = 2,
  BLIS_SLO_SHEDDABLE = 3,
  BLIS_SLO_BATCH = 4,
  BLIS_SLO_BACKGROUND = 5
} blis_slo_class;

/* The plugin's configuration: an opaque, read-only key/value table owned by
 * the host and valid during create() only. Keys are dotted strings such as
 * "model.hidden_size" or "beta_coeffs"; values are read through blis_host. */
typedef struct blis_config blis_config;

/* Services the host offers to plugins. Valid for the lifetime of the objects
 * created with it. */
typedef struct blis_host {
  uint32_t struct_size;
  uint32_t abi_minor;
  void *ctx;
  /* Each lookup returns a blis_config_result. Integers convert to doubles;
   * doubles never silently convert to integers. A NULL `out` (or `count`) is
   * a bug in the plugin: the lookup returns BLIS_CONFIG_WRONG_TYPE and the
   * host fails create() with a message naming the call and the key. */
  int32_t (*config_f64)(const blis_config *config, const char *key, double *out);
  int32_t (*config_i64)(const blis_config *config, const char *key, int64_t *out);
  int32_t (*config_bool)(const blis_config *config, const char *key, int32_t *out);
  /* The string stays valid during create(); copy it to keep it. */
  int32_t (*config_str)(const blis_config *config, const char *key, const char **out);
  /* The array stays valid during create(); copy it to keep it. */
  int32_t (*config_f64_array)(const blis_config *config, const char *key, const double **out,
                              size_t *count);
  /* Writes one line to blis's log (stderr), prefixed with the plugin name. */
  void (*log)(void *ctx, int32_t level, const char *message);
} blis_host;

/* A seeded random stream owned by the host, private to one plugin object and
 * valid for its lifetime. Drawing from it never perturbs other subsystems. */
typedef struct blis_rng {
  void *ctx;
  uint64_t (*next_u64)(void *ctx);
  /* Uniform in [0, 1). */
  double (*next_f64)(void *ctx);
  /* Uniform integer in [0, n); n must be > 0. */
  int64_t (*next_below)(void *ctx, int64_t n);
} blis_rng;

/* What admission policies and routing scorers may know about a request. The
 * output length the simulator will produce is deliberately absent (it is
 * oracle knowledge that a real router does not have). */
typedef struct blis_request_view {
  uint32_t struct_size;
  uint32_t block_size;             /* tokens per KV block */
  uint64_t id;                     /* n of "request_n" */
  int64_t arrival_time_us;
  int64_t input_tokens;            /* prompt length, shared prefix included */
  int64_t max_output_tokens;       /* client budget (max_tokens); 0 = none */
  const uint64_t *block_hashes;    /* chained content hash of each complete input block */
  int64_t num_blocks;              /* = input_tokens / block_size */
  int32_t slo_class;               /* blis_slo_class */
  int32_t reserved0;
  const char *slo_class_name;      /* "" for the default class */
  const char *tenant_id;           /* "" when unset */
  /* ABI 1.6: how many of the last input blocks hold the request's own
   * content: no other request has it, and no other routing decision of the
   * run sees this request, so their hashes are looked up nowhere again. A
   * prefix index may count them without storing them. 0 when unknown (a
   * request may be routed twice with P/D, scenario events or autoscaling).
   * A 1.5 host passes views without the field: check struct_size first. */
  int64_t own_blocks;
  /* ABI 1.7: the LoRA adapter the request names ("" = the base model). A 1.6
   * host passes views without the field: check struct_size first. */
  const char *adapter;
} blis_request_view;

/* One instance as the router sees it (possibly stale, see
 * --snapshot-refresh-interval). The snapshot may grow: index an array of them
 * by blis_route_input.snapshot_size. */
typedef struct blis_instance_snapshot {
  int32_t index;                   /* instance_<index> */
  int32_t queue_depth;             /* requests in the wait queue */
  int32_t batch_size;              /* requests in the running batch */
  int32_t in_flight;               /* routed and not yet completed (always live) */
  int64_t free_kv_blocks;
  int64_t total_kv_blocks;
  double kv_utilization;           /* used / total GPU blocks */
  double cache_hit_rate;           /* cumulative prefix-cache hit rate */
  /* ABI 1.2: leading blocks of this request's input (block_hashes) whose content
   * the instance's GPU KV cache holds, as of the last refresh of the cache
   * signal (--cache-signal-delay; 0 = live). -1 unless a plugin of the run
   * declares BLIS_NEED_PREFIX_CACHE. */
  int64_t cached_blocks;
  /* ABI 1.3: the instance's pool (index in the run's `pools`, 0 without
   * pools) and that pool's tensor parallelism. */
  int32_t pool;
  int32_t tp;
  /* ABI 1.7: 1 when the instance holds the request's LoRA adapter resident
   * (as of the last refresh), 0 when not or the request names none, -1 when
   * the run declares no adapters. A 1.6 host passes snapshots without it
   * (check snapshot_size). */
  int32_t adapter_resident;
  int32_t reserved1;
} blis_instance_snapshot;

/* Input of a routing or admission decision. `instances` has `count` entries
 * of `snapshot_size` bytes each (use the stride, not sizeof, to index). */
typedef struct blis_route_input {
  uint32_t struct_size;
  uint32_t snapshot_size;
  int64_t now_us;
  const blis_request_view *request;
  const blis_instance_snapshot *instances;
  int64_t count;
} blis_route_input;

typedef enum blis_phase { BLIS_PHASE_PREFILL = 0, BLIS_PHASE_DECODE = 1 } blis_phase;

/* One request of the running batch at the start of a step. */
typedef struct blis_batch_entry {
  int64_t input_tokens;            /* prompt length */
  int64_t progress;                /* tokens with KV computed before this step */
  int64_t prefill_target;          /* tokens to prefill before decoding (input_tokens,
                                      more when recomputing after a preemption) */
  int64_t cached_tokens;           /* prefix-cache hits reused at admission this step */
  int32_t new_tokens;              /* tokens computed for it this step; 0 = stalled */
  int32_t phase;                   /* blis_phase */
} blis_batch_entry;

/* A step's batch: `count` entries of `entry_size` bytes each. */
typedef struct blis_step_batch {
  uint32_t struct_size;
  uint32_t entry_size;
  int64_t now_us;
  int64_t count;
  const blis_batch_entry *entries;
} blis_step_batch;

/* ABI 1.5: a step's batch with its plain decode members given by aggregates.
 * It stands for a batch of count + others_count members: `count` plain
 * decodes (phase BLIS_PHASE_DECODE, new_tokens 1, cached_tokens 0) whose
 * progress fields sum to progress_sum (the largest is progress_max) and whose
 * input_tokens sum to input_tokens_sum, and the `others` (prefill chunks,
 * stalled members: every member that is not a plain decode), `entry_size`
 * bytes apart, in batch order among themselves. Where the plain decodes sit
 * among the others is not given. */
typedef struct blis_decode_batch {
  uint32_t struct_size;
  uint32_t entry_size;             /* stride of `others` */
  int64_t now_us;
  int64_t count;                   /* plain decode members */
  int64_t progress_sum;
  int64_t progress_max;
  int64_t input_tokens_sum;
  int64_t others_count;
  const blis_batch_entry *others;
} blis_decode_batch;

/* create() signature shared by every kind. On success stores the new object
 * in *self and returns BLIS_OK; on failure writes a message to errbuf. */
typedef int32_t (*blis_create_fn)(const blis_host *host, const blis_config *config,
                                  const blis_rng *rng, void **self, char *errbuf, size_t errlen);
typedef void (*blis_destroy_fn)(void *self);

/* Latency model: how long a step takes, plus the overheads applied outside the
 * step. Times are microseconds as doubles; the host truncates toward zero and
 * rejects NaN, negative or absurdly large values. */
typedef struct blis_latency_model_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* GPU time of one step over the batch. */
  int32_t (*step_time)(void *self, const blis_step_batch *batch, double *out_us, char *errbuf,
                       size_t errlen);
  /* Delay between a request's arrival at the instance and its enqueue. */
  int32_t (*queueing_time)(void *self, const blis_request_view *request, double *out_us,
                           char *errbuf, size_t errlen);
  /* Per output token processing time, added to TTFT and to every ITL. */
  int32_t (*output_token_time)(void *self, double *out_us, char *errbuf, size_t errlen);
  /* Fixed overhead added to the E2E of requests with output tokens. */
  int32_t (*post_decode_overhead)(void *self, double *out_us, char *errbuf, size_t errlen);
  /* ABI 1.5, optional (may be NULL; read only when struct_size covers it):
   * the step time of a batch whose plain decode members come as aggregates
   * (blis_decode_batch). It must return exactly the value step_time would
   * for any batch the aggregates stand for, or BLIS_DECLINED when it cannot
   * be sure of that (floating-point rounding, say): the host then calls
   * step_time with the whole batch. Its answer depends on its arguments
   * only: the host may price steps ahead and drop some answers unused. */
  int32_t (*decode_step_time)(void *self, const blis_decode_batch *batch, double *out_us,
                              char *errbuf, size_t errlen);
} blis_latency_model_vtable;

/* Routing scorer: one score per instance, in [0, 1] (values outside are
 * clamped by the router, NaN is an error). `scores` has input->count slots. */
typedef struct blis_routing_scorer_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  int32_t (*score)(void *self, const blis_route_input *input, double *scores, char *errbuf,
                   size_t errlen);
  /* Optional (may be NULL): told which instance was chosen, after routing. */
  void (*observe)(void *self, const blis_route_input *input, int64_t chosen_index);
} blis_routing_scorer_vtable;

/* Admission policy: admit (1) or reject (0) a request. On rejection the
 * policy may write a short reason into `reason`. On BLIS_ERROR, `reason` is
 * the error buffer: the host reports what the policy wrote there as the
 * failure's message. The host reads at most reason_len bytes of it. */
typedef struct blis_admission_policy_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  int32_t (*admit)(void *self, const blis_route_input *input, int32_t *admitted, char *reason,
                   size_t reason_len);
} blis_admission_policy_vtable;

/* Autoscaler (ABI 1.4): at each tick of the autoscaler loop, one scaling
 * group (the pools serving one model) as the host collected it, one entry per
 * pool; the autoscaler answers how many instances to start in (delta > 0) or
 * remove from (delta < 0) which pool, or delta 0 for nothing. The host keeps
 * a pool within its limits (room, above_min) whatever the answer. KV figures
 * are in tokens; supply is capacity x kv_cache_threshold. */
typedef struct blis_scaling_variant {
  int32_t pool;            /* the pool's index, to name it in the decision */
  int32_t count;           /* active instances taking traffic */
  int32_t room;            /* how many more it may start: its max minus live instances */
  int32_t above_min;       /* how many it may remove: active minus its min */
  double cost_per_hour;    /* $ per instance-hour */
  double supply;           /* over its active instances */
  double demand;           /* KV tokens in use + queued requests x avg_input_tokens */
  double max_supply;       /* of its largest instance */
  int64_t queue_depth;     /* requests waiting, over its active instances */
  int64_t in_flight;       /* requests routed and not finished, over its active instances */
} blis_scaling_variant;

typedef struct blis_scaling_input {
  uint32_t struct_size;
  uint32_t variant_size;   /* stride of `variants` */
  int64_t now_us;
  double pending_supply;   /* of the instances asked for and not serving yet */
  const blis_scaling_variant *variants; /* `count` entries, cheapest pool first */
  int64_t count;
} blis_scaling_input;

typedef struct blis_scaling_decision {
  int32_t pool;   /* a `pool` of the input's variants; ignored when delta is 0 */
  int32_t delta;
} blis_scaling_decision;

typedef struct blis_autoscaler_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  int32_t (*decide)(void *self, const blis_scaling_input *input, blis_scaling_decision *out,
                    char *errbuf, size_t errlen);
} blis_autoscaler_vtable;

/* Saturation detector (ABI 1.9): the gate of the gateway's flow control
 * (--flow-control, docs/gateway.md). At each dispatch try it gets the
 * instances that take traffic as the router sees them (`request` is NULL)
 * and answers how saturated they are: a finite number >= 0 that the gateway
 * compares with each priority band's ceiling (1 for the most urgent band,
 * down to --usage-limit-threshold for the least); at 1 or more nothing is
 * dispatched. `count` may be 0 (no instance takes traffic). */
typedef struct blis_saturation_detector_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  int32_t (*saturation)(void *self, const blis_route_input *input, double *out, char *errbuf,
                        size_t errlen);
} blis_saturation_detector_vtable;

/* Dispatch order (ABI 1.10): which queued request of the gateway's flow
 * control leaves next (docs/gateway.md). The order gives each request a key
 * once, when it enters the queue; the host keeps the queue and compares the
 * keys: lower leaves first, equal keys in the order the requests entered.
 * `scope` says among which requests (blis_dispatch_scope). */
typedef enum blis_dispatch_scope {
  /* The most urgent band allowed to send; in it the tenant flow the
   * fairness policy picks; from that flow, the lowest key. */
  BLIS_DISPATCH_BY_BAND = 0,
  /* The lowest key among every request of the bands allowed to send (the
   * fairness policy is not asked). */
  BLIS_DISPATCH_ACROSS_BANDS = 1
} blis_dispatch_scope;

/* A request entering the gateway queue. */
typedef struct blis_dispatch_input {
  uint32_t struct_size;
  int32_t priority;                 /* its band: its SLO class's priority (critical 4,
                                       standard and none 3, batch -1, sheddable -2,
                                       background -3) */
  int64_t now_us;                   /* when it enters the queue */
  const blis_request_view *request;
  int64_t slo_target_us;            /* its own TTFT target (a client's slo_target_us), µs;
                                       0 = none: its class's applies */
} blis_dispatch_input;

typedef struct blis_dispatch_order_vtable {
  uint32_t struct_size;
  uint32_t scope;                   /* blis_dispatch_scope */
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* The request's key: a number, not NaN (infinities sort first or last). */
  int32_t (*key)(void *self, const blis_dispatch_input *input, double *out, char *errbuf,
                 size_t errlen);
} blis_dispatch_order_vtable;

/* Encode decider (ABI 1.12): with an encode pool (--encode-instances,
 * docs/epd.md), whether a request goes through it, asked once per request
 * after its decode instance is chosen and the P/D decider has spoken. */
typedef struct blis_encode_input {
  uint32_t struct_size;
  int32_t reserved0;
  int64_t now_us;
  /* Its prompt length (input_tokens, media tokens included), SLO class,
   * tenant and adapter; block_hashes is NULL and num_blocks 0. */
  const blis_request_view *request;
  int64_t image_tokens;             /* media tokens of its prompt; all 0 for a text request */
  int64_t audio_tokens;
  int64_t video_tokens;
  int64_t encode_instances;         /* encode instances that take traffic now (0: an encode is refused) */
  int64_t encoded;                  /* requests sent through the encode pool so far */
} blis_encode_input;

typedef struct blis_encode_decider_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* *out = 1: through the encode pool; 0: not. Any other value is an error. */
  int32_t (*decide)(void *self, const blis_encode_input *input, int32_t *out, char *errbuf,
                    size_t errlen);
} blis_encode_decider_vtable;

/* Fairness policy (ABI 1.13): in a band of the gateway queue, which tenant's
 * flow sends next (docs/gateway.md). Asked each time a band sends under a
 * dispatch order by band (BLIS_DISPATCH_BY_BAND), over the band's non-empty
 * flows in tenant-name order. */
typedef struct blis_fairness_flow {
  const char *tenant;               /* "default" for requests without one */
  int64_t queued;                   /* its requests waiting in the band */
  int64_t head_seq;                 /* when its oldest request entered the queue, as a
                                       sequence number (lower entered first, across bands) */
  const blis_request_view *head;    /* its oldest request (without its input blocks:
                                       block_hashes NULL, num_blocks 0) */
} blis_fairness_flow;

typedef struct blis_fairness_input {
  uint32_t struct_size;
  uint32_t flow_size;               /* sizeof(blis_fairness_flow) */
  int64_t now_us;
  int32_t priority;                 /* the band (as blis_dispatch_input.priority) */
  int32_t last;                     /* the index of the flow this band picked last time,
                                       -1 when none or that flow has emptied since */
  const blis_fairness_flow *flows;
  uint64_t count;                   /* >= 2: a band of one flow has no choice to make */
} blis_fairness_input;

typedef struct blis_fairness_policy_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* The index of the flow that sends, in [0, count). */
  int32_t (*pick)(void *self, const blis_fairness_input *input, int64_t *out, char *errbuf,
                  size_t errlen);
} blis_fairness_policy_vtable;

/* Shedding policy (ABI 1.13): with --queue-shedding, when a request finds
 * the gateway queue full, which queued request leaves (is shed) to make room
 * for it, if any (docs/gateway.md). */
typedef struct blis_shedding_candidate {
  int32_t priority;                 /* its band */
  int32_t reserved0;
  int64_t seq;                      /* its queue sequence number (higher entered later) */
  const char *tenant;               /* "default" for requests without one */
  const blis_request_view *request; /* without its input blocks (block_hashes NULL,
                                       num_blocks 0) */
} blis_shedding_candidate;

typedef struct blis_shedding_input {
  uint32_t struct_size;
  uint32_t candidate_size;          /* sizeof(blis_shedding_candidate) */
  int64_t now_us;
  int32_t priority;                 /* the arriving request's band */
  int32_t reserved0;
  int64_t seq;                      /* its sequence number, above every queued one */
  const blis_request_view *request; /* the arriving request */
  const blis_shedding_candidate *queued; /* every queued request: bands from the most
                                       urgent, tenants in name order, oldest first */
  uint64_t count;
} blis_shedding_input;

typedef struct blis_shedding_policy_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* The index of the queued request shed for the arriving one, in
   * [0, count), or -1: none, the arriving request is rejected. */
  int32_t (*victim)(void *self, const blis_shedding_input *input, int64_t *out, char *errbuf,
                    size_t errlen);
} blis_shedding_policy_vtable;

/* Adapter eviction (ABI 1.14): with LoRA adapter slots (--lora-config,
 * --lora-adapter-capacity; docs/lora.md), when an instance's slots are all
 * taken and an adapter must load, which resident adapter leaves its slot.
 * Asked only when two or more adapters may leave; never for one a running
 * request uses (pinned). */
typedef struct blis_adapter_eviction_input {
  uint32_t struct_size;
  int32_t instance;                 /* the instance's index */
  int64_t now_us;
  const char *loading;              /* the adapter about to load */
  const char *const *candidates;    /* the resident adapters no running request
                                       uses, least recently used first */
  uint64_t count;                   /* >= 2 */
  int64_t capacity;                 /* the instance's adapter slots */
} blis_adapter_eviction_input;

typedef struct blis_adapter_eviction_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* The index of the candidate evicted, in [0, count). */
  int32_t (*choose)(void *self, const blis_adapter_eviction_input *input, int64_t *out, char *errbuf,
                    size_t errlen);
} blis_adapter_eviction_vtable;

/* Offload eviction (ABI 1.15): with a KV offload CPU tier (--kv-offload-config
 * or --kv-cpu-model mirror; docs/kv-offload.md), which block leaves the full
 * CPU tier for a new one. Asked once per block evicted, over the least
 * recently used evictable blocks, at most BLIS_OFFLOAD_EVICTION_CANDIDATES of
 * them (the cost of a decision stays bounded), when there are two or more. */
enum { BLIS_OFFLOAD_EVICTION_CANDIDATES = 8 };

typedef struct blis_offload_block {
  uint64_t hash;                    /* its content hash (as blis_request_view.block_hashes) */
  int32_t secondary;                /* the first secondary tier holding a copy (0: the first
                                       of secondary_tiers), -1: none, evicting it loses it */
  int32_t reserved0;
} blis_offload_block;

typedef struct blis_offload_eviction_input {
  uint32_t struct_size;
  uint32_t candidate_size;          /* sizeof(blis_offload_block) */
  int64_t now_us;
  int64_t used_blocks;              /* CPU blocks held: evictable, pinned or being read */
  int64_t capacity_blocks;          /* the CPU tier's capacity in blocks */
  const blis_offload_block *candidates; /* least recently used first */
  uint64_t count;                   /* 2 .. BLIS_OFFLOAD_EVICTION_CANDIDATES */
} blis_offload_eviction_input;

typedef struct blis_offload_eviction_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  blis_create_fn create;
  blis_destroy_fn destroy;
  /* The index of the candidate evicted, in [0, count). */
  int32_t (*choose)(void *self, const blis_offload_eviction_input *input, int64_t *out, char *errbuf,
                    size_t errlen);
} blis_offload_eviction_vtable;

/* One plugin of a library. `vtable` points to the vtable of `kind`. */
typedef struct blis_plugin_info {
  uint32_t struct_size;
  int32_t kind;                    /* blis_kind */
  const char *name;                /* kebab-case, unique per kind */
  const char *version;
  const char *summary;             /* one line */
  const void *vtable;
  /* ABI 1.1: blis_need bits; read only when struct_size covers it. */
  uint32_t needs;
  uint32_t reserved1;
} blis_plugin_info;

typedef struct blis_manifest {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t struct_size;
  uint32_t count;
  const blis_plugin_info *plugins;
} blis_manifest;

/* Type of the exported entry point `blis_plugin_manifest`. */
typedef const blis_manifest *(*blis_manifest_fn)(void);

/* BLIS_FFI_END */

#ifdef __cplusplus
}
#endif

#define BLIS_MANIFEST_SYMBOL "blis_plugin_manifest"

#if defined(_WIN32)
#define BLIS_PLUGIN_EXPORT __declspec(dllexport)
#else
#define BLIS_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#endif /* BLIS_PLUGIN_H */
