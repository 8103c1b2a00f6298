// blis/plugin.hpp -- header-only C++ helpers over the C ABI of blis/plugin.h.
//
// Write an ordinary class, then export it:
//
//   class MyModel {
//    public:
//     explicit MyModel(blis::sdk::Context& ctx);            // read config, may throw
//     double step_time(const blis_step_batch& batch);       // may throw
//     double queueing_time(const blis_request_view& r);     // optional, default 0
//     double output_token_time();                           // optional, default 0
//     double post_decode_overhead();                        // optional, default 0
//     // optional (ABI 1.5): a decode-only step from its aggregates; exactly
//     // step_time's value for every batch they stand for, or nullopt
//     std::optional<double> decode_step_time(const blis_decode_batch& b);
//   };
//   BLIS_PLUGINS(blis::sdk::latency_model<MyModel>("my-model", "1.0.0", "What it models"))
//
// A latency model that needs the model's architecture, the GPU or trained
// coefficients says so as a fourth argument (blis_need bits), e.g.
// `BLIS_NEED_MODEL | BLIS_NEED_HARDWARE`.
//
// Scorers implement `void score(const blis_route_input&, double* scores)` and
// optionally `void observe(const blis_route_input&, int64_t chosen)`; admission
// policies implement `bool admit(const blis_route_input&, std::string& reason)`;
// autoscalers `blis_scaling_decision decide(const blis_scaling_input&)`;
// saturation detectors `double saturation(const blis_route_input&)`;
// dispatch orders `double key(const blis_dispatch_input&)`, their scope the
// fourth argument of dispatch_order<T>(); encode deciders
// `bool encode(const blis_encode_input&)`; fairness policies
// `int64_t pick(const blis_fairness_input&)`; shedding policies
// `int64_t victim(const blis_shedding_input&)` (-1: none); adapter
// evictions `int64_t choose(const blis_adapter_eviction_input&)`; offload
// evictions `int64_t choose(const blis_offload_eviction_input&)`.
// A scorer that reads the snapshots' cached_blocks passes
// BLIS_NEED_PREFIX_CACHE as the fourth argument of routing_scorer<T>().
//
// The generated trampolines catch every exception and turn it into BLIS_ERROR
// with the exception's message, so nothing C++ crosses the C boundary.
#ifndef BLIS_PLUGIN_HPP
#define BLIS_PLUGIN_HPP

#if __cplusplus < 201703L
#error "blis/plugin.hpp needs C++17 or later (-std=c++17); plain C plugins use blis/plugin.h"
#endif

#include <blis/plugin.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace blis::sdk {

// Thrown by Context accessors. The message names the key ("config key 'k'
// is missing"); the host prefixes the plugin's file and name.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a plugin object receives at construction: its configuration, the host's
// log, and its private random stream. Valid during the constructor; the rng
// and log stay valid for the object's lifetime.
class Context {
 public:
  Context(const blis_host* host, const blis_config* config, const blis_rng* rng)
      : host_(host), config_(config), rng_(rng) {}

  double f64(const char* key) const {
    double v = 0;
    check(host_->config_f64(config_, key, &v), key, "a number");
    return v;
  }
  double f64_or(const char* key, double fallback) const {
    double v = 0;
    return lookup(host_->config_f64(config_, key, &v), key, "a number") ? v : fallback;
  }
  int64_t i64(const char* key) const {
    int64_t v = 0;
    check(host_->config_i64(config_, key, &v), key, "an integer");
    return v;
  }
  int64_t i64_or(const char* key, int64_t fallback) const {
    int64_t v = 0;
    return lookup(host_->config_i64(config_, key, &v), key, "an integer") ? v : fallback;
  }
  bool boolean_or(const char* key, bool fallback) const {
    int32_t v = 0;
    return lookup(host_->config_bool(config_, key, &v), key, "a boolean") ? v != 0 : fallback;
  }
  std::string str(const char* key) const {
    const char* v = nullptr;
    check(host_->config_str(config_, key, &v), key, "a string");
    return v;
  }
  std::string str_or(const char* key, const std::string& fallback) const {
    const char* v = nullptr;
    return lookup(host_->config_str(config_, key, &v), key, "a string") ? std::string(v) : fallback;
  }
  std::vector<double> f64_array(const char* key) const {
    const double* data = nullptr;
    size_t n = 0;
    check(host_->config_f64_array(config_, key, &data, &n), key, "an array of numbers");
    return std::vector<double>(data, data + n);
  }
  bool has(const char* key) const {
    double d;
    int64_t i;
    const char* s;
    const double* a;
    size_t n;
    int32_t b;
    return host_->config_f64(config_, key, &d) != BLIS_CONFIG_MISSING ||
           host_->config_i64(config_, key, &i) != BLIS_CONFIG_MISSING ||
           host_->config_str(config_, key, &s) != BLIS_CONFIG_MISSING ||
           host_->config_f64_array(config_, key, &a, &n) != BLIS_CONFIG_MISSING ||
           host_->config_bool(config_, key, &b) != BLIS_CONFIG_MISSING;
  }

  void log(blis_log_level level, const std::string& message) const {
    host_->log(host_->ctx, level, message.c_str());
  }
  const blis_rng& rng() const { return *rng_; }
  const blis_host* host() const { return host_; }

 private:
  void check(int32_t result, const char* key, const char* what) const {
    if (result == BLIS_CONFIG_MISSING)
      throw ConfigError(std::string("config key '") + key + "' is missing");
    if (result != BLIS_CONFIG_OK)
      throw ConfigError(std::string("config key '") + key + "' must be " + what + ", not " +
                        type_of(key));
  }
  bool lookup(int32_t result, const char* key, const char* what) const {
    if (result == BLIS_CONFIG_MISSING) return false;
    check(result, key, what);
    return true;
  }
  // What the key holds, for the message above. Integers are tried first, as
  // config_f64 accepts them too.
  const char* type_of(const char* key) const {
    int64_t i;
    double d;
    int32_t b;
    const char* s;
    const double* a;
    size_t n;
    if (host_->config_i64(config_, key, &i) == BLIS_CONFIG_OK) return "an integer";
    if (host_->config_f64(config_, key, &d) == BLIS_CONFIG_OK) return "a number";
    if (host_->config_bool(config_, key, &b) == BLIS_CONFIG_OK) return "a boolean";
    if (host_->config_str(config_, key, &s) == BLIS_CONFIG_OK) return "a string";
    if (host_->config_f64_array(config_, key, &a, &n) == BLIS_CONFIG_OK) return "an array";
    return "another type";
  }

  const blis_host* host_;
  const blis_config* config_;
  const blis_rng* rng_;
};

// Indexing helpers that honour the host's strides (structs may grow).
inline const blis_instance_snapshot& instance_at(const blis_route_input& in, int64_t i) {
  return *reinterpret_cast<const blis_instance_snapshot*>(
      reinterpret_cast<const char*>(in.instances) + static_cast<size_t>(i) * in.snapshot_size);
}

// An instance's load as the reference's scorers and least-loaded routing
// define it: queue depth + batch size + in-flight requests, summed in 64 bits
// so three int32 counters cannot overflow. The host's router uses this too.
inline int64_t effective_load(const blis_instance_snapshot& s) {
  return static_cast<int64_t>(s.queue_depth) + s.batch_size + s.in_flight;
}
inline const blis_batch_entry& entry_at(const blis_step_batch& b, int64_t i) {
  return *reinterpret_cast<const blis_batch_entry*>(reinterpret_cast<const char*>(b.entries) +
                                                    static_cast<size_t>(i) * b.entry_size);
}

namespace detail {

// Copies msg into buf, cut to fit and terminated. A plain copy: admission
// policies write their (mostly empty) reason for every request.
inline void write_error(char* buf, size_t len, const char* msg) {
  if (buf == nullptr || len == 0) return;
  const size_t n = std::min(std::strlen(msg), len - 1);
  std::memcpy(buf, msg, n);
  buf[n] = '\0';
}

// Runs f, converting any exception into BLIS_ERROR plus a message.
template <class F>
int32_t guarded(char* errbuf, size_t errlen, F&& f) noexcept {
  try {
    f();
    return BLIS_OK;
  } catch (const std::exception& e) {
    write_error(errbuf, errlen, e.what());
  } catch (...) {
    write_error(errbuf, errlen, "unknown C++ exception");
  }
  return BLIS_ERROR;
}

template <class T>
int32_t create(const blis_host* host, const blis_config* config, const blis_rng* rng, void** self,
               char* errbuf, size_t errlen) noexcept {
  return guarded(errbuf, errlen, [&] {
    Context ctx(host, config, rng);
    *self = new T(ctx);
  });
}
template <class T>
void destroy(void* self) noexcept {
  delete static_cast<T*>(self);
}

template <class T, class = void>
struct has_queueing : std::false_type {};
template <class T>
struct has_queueing<T, std::void_t<decltype(std::declval<T&>().queueing_time(
                           std::declval<const blis_request_view&>()))>> : std::true_type {};
template <class T, class = void>
struct has_output_time : std::false_type {};
template <class T>
struct has_output_time<T, std::void_t<decltype(std::declval<T&>().output_token_time())>>
    : std::true_type {};
template <class T, class = void>
struct has_post_decode : std::false_type {};
template <class T>
struct has_post_decode<T, std::void_t<decltype(std::declval<T&>().post_decode_overhead())>>
    : std::true_type {};
template <class T, class = void>
struct has_decode_step : std::false_type {};
template <class T>
struct has_decode_step<T, std::void_t<decltype(std::declval<T&>().decode_step_time(
                              std::declval<const blis_decode_batch&>()))>> : std::true_type {};
template <class T, class = void>
struct has_observe : std::false_type {};
template <class T>
struct has_observe<T, std::void_t<decltype(std::declval<T&>().observe(
                          std::declval<const blis_route_input&>(), int64_t{}))>>
    : std::true_type {};

template <class T>
struct LatencyTrampolines {
  static int32_t step_time(void* self, const blis_step_batch* b, double* out, char* e,
                           size_t n) noexcept {
    return guarded(e, n, [&] { *out = static_cast<T*>(self)->step_time(*b); });
  }
  static int32_t queueing_time(void* self, const blis_request_view* r, double* out, char* e,
                               size_t n) noexcept {
    return guarded(e, n, [&] {
      if constexpr (has_queueing<T>::value) *out = static_cast<T*>(self)->queueing_time(*r);
      else *out = 0;
    });
  }
  static int32_t output_token_time(void* self, double* out, char* e, size_t n) noexcept {
    return guarded(e, n, [&] {
      if constexpr (has_output_time<T>::value) *out = static_cast<T*>(self)->output_token_time();
      else *out = 0;
    });
  }
  static int32_t post_decode_overhead(void* self, double* out, char* e, size_t n) noexcept {
    return guarded(e, n, [&] {
      if constexpr (has_post_decode<T>::value)
        *out = static_cast<T*>(self)->post_decode_overhead();
      else *out = 0;
    });
  }
  static int32_t decode_step_time(void* self, const blis_decode_batch* b, double* out, char* e,
                                  size_t n) noexcept {
    bool declined = false;
    const int32_t status = guarded(e, n, [&] {
      if constexpr (has_decode_step<T>::value) {
        const std::optional<double> v = static_cast<T*>(self)->decode_step_time(*b);
        if (v) *out = *v;
        else declined = true;
      }
    });
    return status == BLIS_OK && declined ? BLIS_DECLINED : status;
  }
  static constexpr blis_latency_model_vtable vtable{
      sizeof(blis_latency_model_vtable), 0, &create<T>, &destroy<T>, &step_time, &queueing_time,
      &output_token_time, &post_decode_overhead,
      has_decode_step<T>::value ? &decode_step_time : nullptr};
};

template <class T>
struct ScorerTrampolines {
  static int32_t score(void* self, const blis_route_input* in, double* scores, char* e,
                       size_t n) noexcept {
    return guarded(e, n, [&] { static_cast<T*>(self)->score(*in, scores); });
  }
  static void observe(void* self, const blis_route_input* in, int64_t chosen) noexcept {
    if constexpr (has_observe<T>::value) {
      try {
        static_cast<T*>(self)->observe(*in, chosen);
      } catch (...) {
        // observe() cannot report; a throwing observer only loses this update.
      }
    } else {
      (void)self, (void)in, (void)chosen;
    }
  }
  static constexpr blis_routing_scorer_vtable vtable{
      sizeof(blis_routing_scorer_vtable), 0, &create<T>, &destroy<T>, &score,
      has_observe<T>::value ? &observe : nullptr};
};

template <class T>
struct AdmissionTrampolines {
  static int32_t admit(void* self, const blis_route_input* in, int32_t* admitted, char* reason,
                       size_t reason_len) noexcept {
    std::string why;
    int32_t status = guarded(reason, reason_len, [&] {
      *admitted = static_cast<T*>(self)->admit(*in, why) ? 1 : 0;
    });
    if (status == BLIS_OK) write_error(reason, reason_len, why.c_str());
    return status;
  }
  static constexpr blis_admission_policy_vtable vtable{
      sizeof(blis_admission_policy_vtable), 0, &create<T>, &destroy<T>, &admit};
};

template <class T>
struct AutoscalerTrampolines {
  static int32_t decide(void* self, const blis_scaling_input* in, blis_scaling_decision* out, char* err,
                        size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->decide(*in); });
  }
  static constexpr blis_autoscaler_vtable vtable{sizeof(blis_autoscaler_vtable), 0, &create<T>, &destroy<T>,
                                                 &decide};
};

template <class T>
struct SaturationTrampolines {
  static int32_t saturation(void* self, const blis_route_input* in, double* out, char* err,
                            size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->saturation(*in); });
  }
  static constexpr blis_saturation_detector_vtable vtable{sizeof(blis_saturation_detector_vtable), 0,
                                                          &create<T>, &destroy<T>, &saturation};
};

template <class T, uint32_t Scope>
struct DispatchTrampolines {
  static int32_t key(void* self, const blis_dispatch_input* in, double* out, char* err, size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->key(*in); });
  }
  static constexpr blis_dispatch_order_vtable vtable{sizeof(blis_dispatch_order_vtable), Scope, &create<T>,
                                                     &destroy<T>, &key};
};

template <class T>
struct EncodeTrampolines {
  static int32_t decide(void* self, const blis_encode_input* in, int32_t* out, char* err, size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->encode(*in) ? 1 : 0; });
  }
  static constexpr blis_encode_decider_vtable vtable{sizeof(blis_encode_decider_vtable), 0, &create<T>,
                                                     &destroy<T>, &decide};
};

template <class T>
struct FairnessTrampolines {
  static int32_t pick(void* self, const blis_fairness_input* in, int64_t* out, char* err, size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->pick(*in); });
  }
  static constexpr blis_fairness_policy_vtable vtable{sizeof(blis_fairness_policy_vtable), 0, &create<T>,
                                                      &destroy<T>, &pick};
};

template <class T>
struct SheddingTrampolines {
  static int32_t victim(void* self, const blis_shedding_input* in, int64_t* out, char* err, size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->victim(*in); });
  }
  static constexpr blis_shedding_policy_vtable vtable{sizeof(blis_shedding_policy_vtable), 0, &create<T>,
                                                      &destroy<T>, &victim};
};

template <class T>
struct AdapterEvictionTrampolines {
  static int32_t choose(void* self, const blis_adapter_eviction_input* in, int64_t* out, char* err,
                        size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->choose(*in); });
  }
  static constexpr blis_adapter_eviction_vtable vtable{sizeof(blis_adapter_eviction_vtable), 0, &create<T>,
                                                       &destroy<T>, &choose};
};

template <class T>
struct OffloadEvictionTrampolines {
  static int32_t choose(void* self, const blis_offload_eviction_input* in, int64_t* out, char* err,
                        size_t errlen) noexcept {
    return guarded(err, errlen, [&] { *out = static_cast<T*>(self)->choose(*in); });
  }
  static constexpr blis_offload_eviction_vtable vtable{sizeof(blis_offload_eviction_vtable), 0, &create<T>,
                                                       &destroy<T>, &choose};
};

}  // namespace detail

template <class T>
constexpr blis_plugin_info latency_model(const char* name, const char* version,
                                         const char* summary, uint32_t needs = 0) {
  return {sizeof(blis_plugin_info), BLIS_KIND_LATENCY_MODEL, name, version, summary,
          &detail::LatencyTrampolines<T>::vtable, needs, 0};
}
template <class T>
constexpr blis_plugin_info routing_scorer(const char* name, const char* version,
                                          const char* summary, uint32_t needs = 0) {
  return {sizeof(blis_plugin_info), BLIS_KIND_ROUTING_SCORER, name, version, summary,
          &detail::ScorerTrampolines<T>::vtable, needs, 0};
}
template <class T>
constexpr blis_plugin_info admission_policy(const char* name, const char* version,
                                            const char* summary, uint32_t needs = 0) {
  return {sizeof(blis_plugin_info), BLIS_KIND_ADMISSION_POLICY, name, version, summary,
          &detail::AdmissionTrampolines<T>::vtable, needs, 0};
}

template <class T>
constexpr blis_plugin_info autoscaler(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_AUTOSCALER, name, version, summary,
          &detail::AutoscalerTrampolines<T>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info saturation_detector(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_SATURATION_DETECTOR, name, version, summary,
          &detail::SaturationTrampolines<T>::vtable, 0, 0};
}

template <class T, uint32_t Scope = BLIS_DISPATCH_BY_BAND>
constexpr blis_plugin_info dispatch_order(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_DISPATCH_ORDER, name, version, summary,
          &detail::DispatchTrampolines<T, Scope>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info encode_decider(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_ENCODE_DECIDER, name, version, summary,
          &detail::EncodeTrampolines<T>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info fairness_policy(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_FAIRNESS_POLICY, name, version, summary,
          &detail::FairnessTrampolines<T>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info shedding_policy(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_SHEDDING_POLICY, name, version, summary,
          &detail::SheddingTrampolines<T>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info adapter_eviction(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_ADAPTER_EVICTION, name, version, summary,
          &detail::AdapterEvictionTrampolines<T>::vtable, 0, 0};
}

template <class T>
constexpr blis_plugin_info offload_eviction(const char* name, const char* version, const char* summary) {
  return {sizeof(blis_plugin_info), BLIS_KIND_OFFLOAD_EVICTION, name, version, summary,
          &detail::OffloadEvictionTrampolines<T>::vtable, 0, 0};
}

}  // namespace blis::sdk

// Defines the library's entry point over the listed plugin entries.
#define BLIS_PLUGINS(...)                                                                   \
  extern "C" BLIS_PLUGIN_EXPORT const blis_manifest* blis_plugin_manifest(void) {          \
    static const blis_plugin_info blis_plugins_[] = {__VA_ARGS__};                         \
    static const blis_manifest blis_manifest_ = {                                          \
        BLIS_ABI_MAJOR, BLIS_ABI_MINOR, sizeof(blis_manifest),                             \
        static_cast<uint32_t>(sizeof(blis_plugins_) / sizeof(blis_plugins_[0])), blis_plugins_}; \
    return &blis_manifest_;                                                                \
  }

#endif  // BLIS_PLUGIN_HPP
