// The reference's workload-spec YAML (spec workload §5.1-§5.12), read
// strictly: every key of the schema, nothing else, each value of its type.
// Each mapping is read through a table binding its keys to fields; the
// positions of what was read are kept in the spec, so that validation and
// generation errors found later still point into the file.
#include <blis/errors.hpp>
#include <blis/workload.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/strict_yaml.hpp"
#include "workload/spec_internal.hpp"

namespace blis {

namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

class SpecReader {
 public:
  SpecReader(const std::string& path, SpecSource& source)
      : y_(path, config::StrictYaml::Position::kLineColumn), source_(source) {}

  void read(const YAML::Node& root, WorkloadSpec& spec) {
    if (!root.IsMap()) throw ConfigError(y_.where(root.Mark()), "the workload spec must be a mapping");
    read_map(root, "",
             {{"version", &spec.version},
              {"seed", &spec.seed},
              {"category", &spec.category},
              {"clients", list([&](const YAML::Node& e, const std::string& p) { spec.clients.push_back(client(e, p)); })},
              {"cohorts", list([&](const YAML::Node& e, const std::string& p) { spec.cohorts.push_back(cohort(e, p)); })},
              {"aggregate_rate", &spec.aggregate_rate},
              {"horizon", &spec.horizon},
              {"num_requests", &spec.num_requests},
              {"servegen_data", block(spec.servegen_data, &SpecReader::servegen)},
              {"inference_perf", block(spec.inference_perf, &SpecReader::inference_perf)}});
  }

 private:
  // Reads a value found at a path.
  using Reader = std::function<void(const YAML::Node&, const std::string&)>;
  struct Field {
    std::string_view key;
    std::variant<std::string*, double*, int64_t*, bool*, std::optional<double>*, Reader> into;
  };
  using Fields = std::vector<Field>;

  // Reads a mapping into the fields bound to its keys; any other key is an
  // error. A null value leaves its field at the zero value, as in the
  // reference.
  void read_map(const YAML::Node& v, const std::string& path, const Fields& fields) {
    const YAML::Node& map = y_.mapping(v, path);
    std::vector<std::string_view> keys;
    for (const Field& f : fields) keys.push_back(f.key);
    for (const auto& entry : y_.entries(map, path, keys)) {
      // Named, not structured bindings: clang before 16 cannot capture those.
      const std::string& key = entry.first;
      const YAML::Node& w = entry.second;
      if (w.IsNull()) continue;
      const std::string p = config::child_path(path, key);
      note(p, w);
      const Field& f = *std::find_if(fields.begin(), fields.end(), [&](const Field& x) { return x.key == key; });
      std::visit(Overloaded{[&](std::string* s) { *s = y_.string(w, p); },
                            [&](double* d) { *d = y_.number(w, p); },
                            [&](int64_t* i) { *i = y_.integer(w, p); },
                            [&](bool* b) { *b = y_.boolean(w, p); },
                            [&](std::optional<double>* o) { *o = y_.number(w, p); },
                            [&](const Reader& r) { r(w, p); }},
                 f.into);
    }
  }

  // An element of a list of mappings (a null element reads as all zero).
  void read_element(const YAML::Node& e, const std::string& path, const Fields& fields) {
    if (!e.IsNull()) read_map(e, path, fields);
  }

  void note(const std::string& path, const YAML::Node& v) { source_.positions[path] = y_.where(v.Mark()); }

  // A list whose elements `each(element, path)` reads.
  Reader list(std::function<void(const YAML::Node&, const std::string&)> each) {
    return [this, each = std::move(each)](const YAML::Node& v, const std::string& path) {
      const YAML::Node& seq = y_.sequence(v, path);
      for (size_t i = 0; i < seq.size(); ++i) {
        const YAML::Node e = seq[i];
        const std::string p = path + "[" + std::to_string(i) + "]";
        note(p, e);
        each(e, p);
      }
    };
  }

  // A nested block read by `read_block` into a field (a std::optional one
  // for the blocks whose presence matters).
  template <typename Into, typename T>
  Reader block(Into& into, T (SpecReader::*read_block)(const YAML::Node&, const std::string&)) {
    return [this, &into, read_block](const YAML::Node& v, const std::string& path) {
      into = (this->*read_block)(v, path);
    };
  }

  ArrivalSpec arrival(const YAML::Node& v, const std::string& path) {
    ArrivalSpec a;
    a.process.clear();  // required: absent stays empty and fails validation
    read_map(v, path, {{"process", &a.process}, {"cv", &a.cv}});
    return a;
  }

  DistSpec dist(const YAML::Node& v, const std::string& path) {
    DistSpec d;
    std::string file;  // reserved by the reference, never read
    const Reader params = [&](const YAML::Node& w, const std::string& p) {
      // Any key: empirical bins are token counts. A null value is 0.
      for (const auto& [name, x] : y_.entries(y_.mapping(w, p), p, {})) {
        note(p + "." + name, x);
        d.params[name] = x.IsNull() ? 0.0 : y_.number(x, p + "." + name);
      }
    };
    read_map(v, path, {{"type", &d.type}, {"params", params}, {"file", &file}});
    return d;
  }

  // The keys a client and a cohort share.
  Fields traffic(TrafficSource& t) {
    t.arrival.process.clear();
    return {{"id", &t.id},
            {"tenant_id", &t.tenant_id},
            {"slo_class", &t.slo_class},
            {"model", &t.model},
            {"adapter", &t.adapter},
            {"rate_fraction", &t.rate_fraction},
            {"arrival", block(t.arrival, &SpecReader::arrival)},
            {"input_distribution", block(t.input_distribution, &SpecReader::dist)},
            {"output_distribution", block(t.output_distribution, &SpecReader::dist)},
            {"prefix_group", &t.prefix_group},
            {"streaming", &t.streaming},
            {"slo_target_us", &t.slo_target_us}};
  }

  ClientSpec client(const YAML::Node& e, const std::string& path) {
    ClientSpec c;
    Fields fields = traffic(c);
    fields.insert(fields.end(), {{"prefix_length", &c.prefix_length},
                                 {"concurrency", &c.concurrency},
                                 {"think_time_us", &c.think_time_us},
                                 {"timeout", Reader([this, &c](const YAML::Node& w, const std::string& p) {
                                    c.timeout_us = y_.integer(w, p);
                                  })},
                                 {"network", block(c.network, &SpecReader::network)},
                                 {"lifecycle", block(c.lifecycle, &SpecReader::lifecycle)},
                                 {"multimodal", block(c.multimodal, &SpecReader::multimodal)},
                                 {"reasoning", block(c.reasoning, &SpecReader::reasoning)}});
    read_element(e, path, fields);
    return c;
  }

  NetworkSpec network(const YAML::Node& v, const std::string& path) {
    NetworkSpec n;
    read_map(v, path, {{"rtt_ms", &n.rtt_ms}, {"bandwidth_mbps", &n.bandwidth_mbps}});
    return n;
  }

  std::vector<LifecycleWindow> lifecycle(const YAML::Node& v, const std::string& path) {
    std::vector<LifecycleWindow> windows;
    const Reader each = list([&](const YAML::Node& e, const std::string& p) {
      LifecycleWindow& w = windows.emplace_back();
      read_element(e, p, {{"start_us", &w.start_us}, {"end_us", &w.end_us}});
    });
    read_map(v, path, {{"windows", each}});
    return windows;
  }

  MultimodalSpec multimodal(const YAML::Node& v, const std::string& path) {
    MultimodalSpec m;
    read_map(v, path,
             {{"text_distribution", block(m.text_distribution, &SpecReader::dist)},
              {"image_distribution", block(m.image_distribution, &SpecReader::dist)},
              {"image_count_distribution", block(m.image_count_distribution, &SpecReader::dist)},
              {"audio_distribution", block(m.audio_distribution, &SpecReader::dist)},
              {"audio_count_distribution", block(m.audio_count_distribution, &SpecReader::dist)},
              {"video_distribution", block(m.video_distribution, &SpecReader::dist)},
              {"video_count_distribution", block(m.video_count_distribution, &SpecReader::dist)}});
    return m;
  }

  MultiTurnSpec multi_turn(const YAML::Node& v, const std::string& path) {
    MultiTurnSpec mt;
    read_map(v, path,
             {{"max_rounds", &mt.max_rounds},
              {"think_time_us", &mt.think_time_us},
              {"context_growth", &mt.context_growth},
              {"single_session", &mt.single_session}});
    return mt;
  }

  ReasoningSpec reasoning(const YAML::Node& v, const std::string& path) {
    ReasoningSpec r;
    read_map(v, path,
             {{"reason_ratio_distribution", block(r.reason_ratio_distribution, &SpecReader::dist)},
              {"multi_turn", block(r.multi_turn, &SpecReader::multi_turn)}});
    return r;
  }

  CohortSpec cohort(const YAML::Node& e, const std::string& path) {
    CohortSpec c;
    Fields fields = traffic(c);
    fields.insert(fields.end(), {{"population", &c.population},
                                 {"diurnal", block(c.diurnal, &SpecReader::diurnal)},
                                 {"spike", block(c.spike, &SpecReader::spike)},
                                 {"drain", block(c.drain, &SpecReader::drain)}});
    read_element(e, path, fields);
    return c;
  }

  DiurnalSpec diurnal(const YAML::Node& v, const std::string& path) {
    DiurnalSpec d;
    read_map(v, path, {{"peak_hour", &d.peak_hour}, {"peak_to_trough_ratio", &d.peak_to_trough_ratio}});
    return d;
  }

  SpikeSpec spike(const YAML::Node& v, const std::string& path) {
    SpikeSpec s;
    read_map(v, path, {{"start_time_us", &s.start_time_us}, {"duration_us", &s.duration_us}});
    return s;
  }

  DrainSpec drain(const YAML::Node& v, const std::string& path) {
    DrainSpec d;
    read_map(v, path, {{"start_time_us", &d.start_time_us}, {"ramp_duration_us", &d.ramp_duration_us}});
    return d;
  }

  ServeGenDataSpec servegen(const YAML::Node& v, const std::string& path) {
    ServeGenDataSpec s;
    read_map(v, path, {{"path", &s.path}, {"span_start", &s.span_start}, {"span_end", &s.span_end}});
    return s;
  }

  SharedPrefixSpec shared_prefix(const YAML::Node& v, const std::string& path) {
    SharedPrefixSpec sp;
    read_map(v, path,
             {{"num_unique_system_prompts", &sp.num_unique_system_prompts},
              {"num_users_per_system_prompt", &sp.num_users_per_system_prompt},
              {"system_prompt_len", &sp.system_prompt_len},
              {"question_len", &sp.question_len},
              {"output_len", &sp.output_len},
              {"enable_multi_turn_chat", &sp.enable_multi_turn_chat}});
    return sp;
  }

  InferencePerfSpec inference_perf(const YAML::Node& v, const std::string& path) {
    InferencePerfSpec ip;
    const Reader stages = list([&](const YAML::Node& e, const std::string& p) {
      InferencePerfStage& st = ip.stages.emplace_back();
      read_element(e, p, {{"rate", &st.rate}, {"duration", &st.duration}});
    });
    read_map(v, path, {{"stages", stages}, {"shared_prefix", block(ip.shared_prefix, &SpecReader::shared_prefix)}});
    return ip;
  }

  config::StrictYaml y_;
  SpecSource& source_;
};

}  // namespace

WorkloadSpec load_workload_spec(const std::string& path) {
  const std::string text = config::read_text_file(path, "workload spec");
  WorkloadSpec spec;
  spec.version.clear();  // absent means "" (upgraded below), as in the reference
  spec.source.file = path;
  const config::StrictYaml y(path, config::StrictYaml::Position::kLineColumn);
  // Only the first document counts, as with the reference's decoder.
  const auto doc = y.first_document(text);
  if (!doc) throw ConfigError(path, "empty workload spec (no YAML document)");
  if (!doc->IsNull()) SpecReader(path, spec.source).read(*doc, spec);
  workload::upgrade_legacy_version(spec);
  return spec;
}

}  // namespace blis
