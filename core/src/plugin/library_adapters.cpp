// Shared-library plugins as internal objects: one ObjectContext per object
// (library handle, host, rng) and one adapter class per kind.
#include "plugin/library_adapters.hpp"

#include "plugin/host_api.hpp"
#include "plugin/loaded_library.hpp"
#include "plugin/time_check.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace blis {
namespace {

constexpr size_t kErrLen = 512;
constexpr size_t kReasonLen = 256;

// The text a plugin wrote into a host buffer of `size` bytes, which it may
// have filled without a terminating NUL.
std::string text_in(const char* buf, size_t size, const char* fallback) {
  const size_t n = ::strnlen(buf, size);
  return n > 0 ? std::string(buf, n) : std::string(fallback);
}

// Everything an object created from a library holds on to.
struct ObjectContext {
  std::shared_ptr<LoadedLibrary> lib;
  std::string name;
  PluginLogContext log;
  blis_host host;
  std::unique_ptr<PluginRng> rng;

  ObjectContext(const LibraryPlugin& p, PluginKind kind, int64_t seed)
      : lib(p.lib), name(p.name), log{p.name}, host(make_host(&log)),
        rng(std::make_unique<PluginRng>(seed, std::string("plugin:") + kind_name(kind) + ":" + p.name)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw PluginError(lib->path(), fmt::format("plugin '{}': {}", name, what));
  }

  // `destroy` releases an object create() made before the host refused it.
  void* create(blis_create_fn fn, blis_destroy_fn destroy, const ConfigTable& config) {
    char err[kErrLen] = {0};
    void* self = nullptr;
    HostConfig cfg{&config, {}};
    int32_t status = BLIS_ERROR;
    try {
      status = fn(&host, as_blis_config(cfg), rng->view(), &self, err, sizeof(err));
    } catch (...) {
      fail("create() threw a C++ exception across the C ABI");
    }
    if (!cfg.misuse.empty()) {
      if (status == BLIS_OK && self != nullptr) destroy(self);
      fail("create() " + cfg.misuse);
    }
    if (status != BLIS_OK) fail("create() failed: " + text_in(err, sizeof(err), "no message"));
    if (self == nullptr) fail("create() returned no object");
    return self;
  }

  // Runs one call that reports errors in a buffer of `size` bytes at `buf`;
  // a status error or an escaping exception becomes PluginError.
  template <class F>
  void call(const char* what, char* buf, size_t size, F&& f) {
    buf[0] = '\0';
    int32_t status = BLIS_ERROR;
    try {
      status = f(buf, size);
    } catch (...) {
      fail(fmt::format("{}() threw a C++ exception across the C ABI", what));
    }
    if (status != BLIS_OK) fail(fmt::format("{}() failed: {}", what, text_in(buf, size, "no message")));
  }
  template <class F>
  void call(const char* what, F&& f) {
    char err[kErrLen];
    call(what, err, sizeof(err), std::forward<F>(f));
  }

  template <class Context>
  int64_t time(const char* what, double us, Context&& context) const {
    return checked_time(us, context, [&](const std::string& text) { fail(fmt::format("{}() {}", what, text)); });
  }
};

std::string describe_batch(const blis_step_batch& b) {
  int64_t prefill = 0, decode = 0, tokens = 0;
  for (int64_t i = 0; i < b.count; ++i) {
    const auto& e = *reinterpret_cast<const blis_batch_entry*>(
        reinterpret_cast<const char*>(b.entries) + static_cast<size_t>(i) * b.entry_size);
    (e.phase == BLIS_PHASE_PREFILL ? prefill : decode) += 1;
    tokens += e.new_tokens;
  }
  return fmt::format(" for a batch of {} requests ({} prefill, {} decode, {} new tokens) at t={} µs",
                     b.count, prefill, decode, tokens, b.now_us);
}

std::string no_context() { return std::string(); }

class SharedLatencyModel final : public LatencyModel {
 public:
  SharedLatencyModel(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::LatencyModel, a.seed),
        vt_(static_cast<const blis_latency_model_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedLatencyModel() override { vt_->destroy(self_); }

  int64_t step_time(const blis_step_batch& batch) override {
    double v = 0;
    ctx_.call("step_time", [&](char* e, size_t n) { return vt_->step_time(self_, &batch, &v, e, n); });
    return ctx_.time("step_time", v, [&] { return describe_batch(batch); });
  }
  bool prices_decode_aggregates() const override { return decode_ != nullptr; }
  bool decode_step_time(const blis_decode_batch& batch, int64_t& out) override {
    if (decode_ == nullptr) return false;
    double v = 0;
    bool declined = false;
    ctx_.call("decode_step_time", [&](char* e, size_t n) {
      const int32_t status = decode_(self_, &batch, &v, e, n);
      declined = status == BLIS_DECLINED;
      return declined ? int32_t{BLIS_OK} : status;
    });
    if (declined) return false;
    out = ctx_.time("decode_step_time", v, [&] {
      return fmt::format(" for a batch of {} requests (0 prefill, {} decode, {} new tokens) at t={} µs",
                         batch.count, batch.count, batch.count, batch.now_us);
    });
    return true;
  }
  int64_t queueing_time(const blis_request_view& r) override {
    double v = 0;
    ctx_.call("queueing_time", [&](char* e, size_t n) { return vt_->queueing_time(self_, &r, &v, e, n); });
    return ctx_.time("queueing_time", v, [&] { return fmt::format(" for request_{}", r.id); });
  }
  int64_t output_token_time() override {
    double v = 0;
    ctx_.call("output_token_time", [&](char* e, size_t n) { return vt_->output_token_time(self_, &v, e, n); });
    return ctx_.time("output_token_time", v, no_context);
  }
  int64_t post_decode_overhead() override {
    double v = 0;
    ctx_.call("post_decode_overhead",
              [&](char* e, size_t n) { return vt_->post_decode_overhead(self_, &v, e, n); });
    return ctx_.time("post_decode_overhead", v, no_context);
  }

 private:
  ObjectContext ctx_;
  const blis_latency_model_vtable* vt_;
  void* self_;
  // ABI 1.5's optional call, when the plugin's vtable has it.
  decltype(blis_latency_model_vtable::decode_step_time) decode_ =
      vt_->struct_size >= offsetof(blis_latency_model_vtable, decode_step_time) + sizeof(void*)
          ? vt_->decode_step_time
          : nullptr;
};

constexpr uint32_t kScorerObserveEnd = offsetof(blis_routing_scorer_vtable, observe) + sizeof(void*);

class SharedScorer final : public RoutingScorer {
 public:
  SharedScorer(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::RoutingScorer, a.seed),
        vt_(static_cast<const blis_routing_scorer_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)),
        observe_(vt_->struct_size >= kScorerObserveEnd ? vt_->observe : nullptr) {}
  ~SharedScorer() override { vt_->destroy(self_); }

  // NaN is refused here, as the Lua adapter does, so a bad score stops the
  // run (and `plugins inspect`) as a plugin error whatever the plugin is.
  void score(const blis_route_input& in, double* scores) override {
    ctx_.call("score", [&](char* e, size_t n) { return vt_->score(self_, &in, scores, e, n); });
    for (int64_t i = 0; i < in.count; ++i)
      if (std::isnan(scores[i]))
        ctx_.fail(fmt::format("score() returned NaN for instance {} (scores must be numbers, "
                              "clamped into [0, 1])",
                              i));
  }
  bool observes() const override { return observe_ != nullptr; }
  void observe(const blis_route_input& in, int64_t chosen) override {
    try {
      observe_(self_, &in, chosen);
    } catch (...) {
      ctx_.fail("observe() threw a C++ exception across the C ABI");
    }
  }

 private:
  ObjectContext ctx_;
  const blis_routing_scorer_vtable* vt_;
  void* self_;
  void (*observe_)(void*, const blis_route_input*, int64_t);
};

// The reason buffer doubles as the error buffer: on BLIS_ERROR it holds the
// error message (plugin.h). Every library built with the SDK's C++ helper
// has always written its exception text there, so no new call was needed.
class SharedAdmission final : public AdmissionPolicy {
 public:
  SharedAdmission(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::AdmissionPolicy, a.seed),
        vt_(static_cast<const blis_admission_policy_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedAdmission() override { vt_->destroy(self_); }

  bool admit(const blis_route_input& in, std::string& reason) override {
    int32_t admitted = 0;
    char why[kReasonLen];
    ctx_.call("admit", why, sizeof(why), [&](char* buf, size_t n) {
      return vt_->admit(self_, &in, &admitted, buf, n);
    });
    reason = admitted ? std::string() : std::string(why, ::strnlen(why, sizeof(why)));
    return admitted != 0;
  }

 private:
  ObjectContext ctx_;
  const blis_admission_policy_vtable* vt_;
  void* self_;
};

class SharedAutoscaler final : public Autoscaler {
 public:
  SharedAutoscaler(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::Autoscaler, a.seed),
        vt_(static_cast<const blis_autoscaler_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedAutoscaler() override { vt_->destroy(self_); }

  blis_scaling_decision decide(const blis_scaling_input& in) override {
    blis_scaling_decision out{-1, 0};
    ctx_.call("decide", [&](char* buf, size_t n) { return vt_->decide(self_, &in, &out, buf, n); });
    return out;
  }

 private:
  ObjectContext ctx_;
  const blis_autoscaler_vtable* vt_;
  void* self_;
};

// A saturation that is not a finite number >= 0 stops the run, as the Lua
// adapter does: the gateway compares it with ceilings in (0, 1].
class SharedSaturation final : public SaturationDetector {
 public:
  SharedSaturation(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::SaturationDetector, a.seed),
        vt_(static_cast<const blis_saturation_detector_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedSaturation() override { vt_->destroy(self_); }

  double saturation(const blis_route_input& in) override {
    double out = 0;
    ctx_.call("saturation", [&](char* e, size_t n) { return vt_->saturation(self_, &in, &out, e, n); });
    if (!std::isfinite(out) || out < 0)
      ctx_.fail(fmt::format("saturation() returned {} over {} instances at t={} µs (it must be a finite "
                            "number >= 0)",
                            out, in.count, in.now_us));
    return out;
  }

 private:
  ObjectContext ctx_;
  const blis_saturation_detector_vtable* vt_;
  void* self_;
};

// A NaN key stops the run, as the Lua adapter does: keys are compared.
class SharedDispatch final : public DispatchOrder {
 public:
  SharedDispatch(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::DispatchOrder, a.seed),
        vt_(static_cast<const blis_dispatch_order_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {
    if (vt_->scope != BLIS_DISPATCH_BY_BAND && vt_->scope != BLIS_DISPATCH_ACROSS_BANDS)
      ctx_.fail(fmt::format("its vtable's scope is {}; it must be BLIS_DISPATCH_BY_BAND (0) or "
                            "BLIS_DISPATCH_ACROSS_BANDS (1)",
                            vt_->scope));
  }
  ~SharedDispatch() override { vt_->destroy(self_); }

  bool across_bands() const override { return vt_->scope == BLIS_DISPATCH_ACROSS_BANDS; }
  double key(const blis_dispatch_input& in) override {
    double out = 0;
    ctx_.call("key", [&](char* e, size_t n) { return vt_->key(self_, &in, &out, e, n); });
    if (std::isnan(out))
      ctx_.fail(fmt::format("key() returned NaN for request_{} at t={} µs (keys must be numbers)",
                            in.request != nullptr ? in.request->id : 0, in.now_us));
    return out;
  }

 private:
  ObjectContext ctx_;
  const blis_dispatch_order_vtable* vt_;
  void* self_;
};

// An answer other than 0 or 1 stops the run, as the Lua adapter's does.
class SharedEncode final : public EncodeDecider {
 public:
  SharedEncode(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::EncodeDecider, a.seed),
        vt_(static_cast<const blis_encode_decider_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedEncode() override { vt_->destroy(self_); }

  bool encode(const blis_encode_input& in) override {
    int32_t out = 0;
    ctx_.call("decide", [&](char* e, size_t n) { return vt_->decide(self_, &in, &out, e, n); });
    if (out != 0 && out != 1)
      ctx_.fail(fmt::format("decide() answered {} for request_{} at t={} µs (it must be 0 or 1)", out,
                            in.request != nullptr ? in.request->id : 0, in.now_us));
    return out == 1;
  }

 private:
  ObjectContext ctx_;
  const blis_encode_decider_vtable* vt_;
  void* self_;
};

// An index out of range stops the run, as the Lua adapter does.
class SharedFairness final : public FairnessPolicy {
 public:
  SharedFairness(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::FairnessPolicy, a.seed),
        vt_(static_cast<const blis_fairness_policy_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedFairness() override { vt_->destroy(self_); }

  size_t pick(const blis_fairness_input& in) override {
    int64_t out = -1;
    ctx_.call("pick", [&](char* e, size_t n) { return vt_->pick(self_, &in, &out, e, n); });
    if (out < 0 || static_cast<uint64_t>(out) >= in.count)
      ctx_.fail(
          fmt::format("pick() returned {} over {} flows of band {} at t={} µs (it must be an index in "
                      "[0, {}))",
                      out, in.count, in.priority, in.now_us, in.count));
    return static_cast<size_t>(out);
  }

 private:
  ObjectContext ctx_;
  const blis_fairness_policy_vtable* vt_;
  void* self_;
};

// An index out of range stops the run, as the Lua adapter does.
class SharedShedding final : public SheddingPolicy {
 public:
  SharedShedding(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::SheddingPolicy, a.seed),
        vt_(static_cast<const blis_shedding_policy_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedShedding() override { vt_->destroy(self_); }

  int64_t victim(const blis_shedding_input& in) override {
    int64_t out = -1;
    ctx_.call("victim", [&](char* e, size_t n) { return vt_->victim(self_, &in, &out, e, n); });
    if (out < -1 || (out >= 0 && static_cast<uint64_t>(out) >= in.count))
      ctx_.fail(
          fmt::format("victim() returned {} over {} queued requests at t={} µs (it must be an index in "
                      "[0, {}) or -1)",
                      out, in.count, in.now_us, in.count));
    return out;
  }

 private:
  ObjectContext ctx_;
  const blis_shedding_policy_vtable* vt_;
  void* self_;
};

// An index out of range stops the run, as the Lua adapter does.
class SharedAdapterEviction final : public AdapterEviction {
 public:
  SharedAdapterEviction(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::AdapterEviction, a.seed),
        vt_(static_cast<const blis_adapter_eviction_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedAdapterEviction() override { vt_->destroy(self_); }

  size_t choose(const blis_adapter_eviction_input& in) override {
    int64_t out = -1;
    ctx_.call("choose", [&](char* e, size_t n) { return vt_->choose(self_, &in, &out, e, n); });
    if (out < 0 || static_cast<uint64_t>(out) >= in.count)
      ctx_.fail(fmt::format("choose() returned {} over {} evictable adapters of instance {} at t={} µs (it must "
                            "be an index in [0, {}))",
                            out, in.count, in.instance, in.now_us, in.count));
    return static_cast<size_t>(out);
  }

 private:
  ObjectContext ctx_;
  const blis_adapter_eviction_vtable* vt_;
  void* self_;
};

// An index out of range stops the run, as the Lua adapter does.
class SharedOffloadEviction final : public OffloadEviction {
 public:
  SharedOffloadEviction(const LibraryPlugin& p, const CreateArgs& a)
      : ctx_(p, PluginKind::OffloadEviction, a.seed),
        vt_(static_cast<const blis_offload_eviction_vtable*>(p.vtable)),
        self_(ctx_.create(vt_->create, vt_->destroy, *a.config)) {}
  ~SharedOffloadEviction() override { vt_->destroy(self_); }

  size_t choose(const blis_offload_eviction_input& in) override {
    int64_t out = -1;
    ctx_.call("choose", [&](char* e, size_t n) { return vt_->choose(self_, &in, &out, e, n); });
    if (out < 0 || static_cast<uint64_t>(out) >= in.count)
      ctx_.fail(fmt::format("choose() returned {} over {} evictable CPU blocks at t={} µs (it must be an index in "
                            "[0, {}))",
                            out, in.count, in.now_us, in.count));
    return static_cast<size_t>(out);
  }

 private:
  ObjectContext ctx_;
  const blis_offload_eviction_vtable* vt_;
  void* self_;
};

}  // namespace

std::unique_ptr<OffloadEviction> make_library_offload_eviction(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedOffloadEviction>(p, args);
}

std::unique_ptr<AdapterEviction> make_library_adapter_eviction(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedAdapterEviction>(p, args);
}

std::unique_ptr<EncodeDecider> make_library_encode(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedEncode>(p, args);
}

std::unique_ptr<SheddingPolicy> make_library_shedding(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedShedding>(p, args);
}

std::unique_ptr<FairnessPolicy> make_library_fairness(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedFairness>(p, args);
}

std::unique_ptr<DispatchOrder> make_library_dispatch(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedDispatch>(p, args);
}

std::unique_ptr<SaturationDetector> make_library_saturation(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedSaturation>(p, args);
}

std::unique_ptr<Autoscaler> make_library_autoscaler(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedAutoscaler>(p, args);
}

std::unique_ptr<LatencyModel> make_library_latency_model(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedLatencyModel>(p, args);
}
std::unique_ptr<RoutingScorer> make_library_scorer(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedScorer>(p, args);
}
std::unique_ptr<AdmissionPolicy> make_library_admission(const LibraryPlugin& p, const CreateArgs& args) {
  return std::make_unique<SharedAdmission>(p, args);
}

}  // namespace blis
