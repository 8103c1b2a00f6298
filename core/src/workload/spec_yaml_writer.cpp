// A workload spec written as YAML (spec workload §9.1): the layout of the
// reference's YAML library at 4-space indentation, so that converted specs
// read like the reference's and load_workload_spec reads them back exactly.
#include <blis/workload_convert.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace blis {

namespace {

// A YAML value: a scalar (already formatted), a mapping or a sequence.
struct Node {
  enum class Kind { kScalar, kMap, kSeq } kind = Kind::kScalar;
  std::string scalar;
  std::vector<std::string> keys;  // a mapping's keys, in order; its values are `seq`
  std::vector<Node> seq;

  static Node mapping() { return Node{Kind::kMap, {}, {}, {}}; }
  static Node sequence() { return Node{Kind::kSeq, {}, {}, {}}; }
  void add(std::string key, Node value) {
    keys.push_back(std::move(key));
    seq.push_back(std::move(value));
  }
  bool empty() const { return kind != Kind::kScalar && seq.empty(); }
};

Node scalar(std::string s) { return Node{Node::Kind::kScalar, std::move(s), {}, {}}; }

// Go's strconv.FormatFloat(x, 'g', -1, 64), as the reference's YAML library
// writes floats: the shortest digits, in exponent form (at least two exponent
// digits) when the decimal exponent is below -4 or at least 6; infinities and
// NaN in YAML's words.
std::string go_g(double x) {
  if (std::isnan(x)) return ".nan";
  if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+06"
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  if (exp < -4 || exp >= 6) return sci;
  std::string sign, digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] == '-') sign = "-";
    else if (sci[i] != '.') digits += sci[i];
  }
  const int point = exp + 1;  // digits before the decimal point
  std::string out;
  if (point <= 0) {
    out = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
  }
  return sign + out;
}

Node number(double x) { return scalar(go_g(x)); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The order in which the reference's YAML library writes string map keys:
// runs of digits compare as numbers ("20" before "100"), a letter against
// anything else goes first (after a digit run: last), otherwise by character.
bool yaml_key_less(const std::string& a, const std::string& b) {
  bool digits = false;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) {
      digits = is_digit(a[i]);
      continue;
    }
    const bool al = is_letter(a[i]), bl = is_letter(b[i]);
    if (al && bl) return a[i] < b[i];
    if (al || bl) return digits ? al : bl;
    int64_t an = 0, bn = 0;
    if (a[i] == '0' || b[i] == '0')
      for (size_t j = i; j-- > 0 && is_digit(a[j]);)
        if (a[j] != '0') {
          an = bn = 1;
          break;
        }
    size_t ai = i, bi = i;
    for (; ai < a.size() && is_digit(a[ai]); ++ai) an = an * 10 + (a[ai] - '0');
    for (; bi < b.size() && is_digit(b[bi]); ++bi) bn = bn * 10 + (b[bi] - '0');
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return a[i] < b[i];
  }
  return a.size() < b.size();
}
Node integer(int64_t x) { return scalar(std::to_string(x)); }
Node boolean(bool b) { return scalar(b ? "true" : "false"); }

// A string, plain when YAML would read it back as the same string, quoted
// otherwise ("2", "", "yes", "a: b").
Node text(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '/';
    if (!ok) plain = false;
  }
  if (plain) {
    const char c0 = s[0];
    if ((c0 >= '0' && c0 <= '9') || c0 == '-' || c0 == '.') plain = false;
    std::string lower;
    for (char c : s) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    for (const char* word : {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"})
      if (lower == word) plain = false;
  }
  if (plain) return scalar(s);
  std::string q = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': q += "\\\""; break;
      case '\\': q += "\\\\"; break;
      case '\n': q += "\\n"; break;
      case '\t': q += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          q += "\\x";
          q += hex[c >> 4];
          q += hex[c & 15];
        } else {
          q += static_cast<char>(c);
        }
    }
  }
  return scalar(q + "\"");
}

// ---- the schema, in its order ----

// A distribution; absent (empty) when it has neither type nor parameters.
Node dist(const DistSpec& d) {
  Node n = Node::mapping();
  n.add("type", text(d.type));
  if (!d.params.empty()) {
    Node p = Node::mapping();
    // In the reference's key order; an empirical bin's key is quoted, as the
    // reference writes a string key that reads as a number.
    std::vector<std::string> keys;
    for (const auto& kv : d.params) keys.push_back(kv.first);
    std::stable_sort(keys.begin(), keys.end(), yaml_key_less);
    for (const std::string& k : keys) p.add(text(k).scalar, number(d.params.at(k)));
    n.add("params", std::move(p));
  }
  return n;
}
bool dist_empty(const DistSpec& d) { return d.type.empty() && d.params.empty(); }

Node arrival(const ArrivalSpec& a) {
  Node n = Node::mapping();
  n.add("process", text(a.process));
  if (a.cv) n.add("cv", number(*a.cv));
  return n;
}

// The keys a client and a cohort share, up to prefix_group.
void traffic_head(Node& n, const TrafficSource& t) {
  n.add("id", text(t.id));
  n.add("tenant_id", text(t.tenant_id));
  n.add("slo_class", text(t.slo_class));
  if (!t.model.empty()) n.add("model", text(t.model));
  n.add("rate_fraction", number(t.rate_fraction));
  n.add("arrival", arrival(t.arrival));
  n.add("input_distribution", dist(t.input_distribution));
  n.add("output_distribution", dist(t.output_distribution));
  if (!t.prefix_group.empty()) n.add("prefix_group", text(t.prefix_group));
  if (t.slo_target_us != 0) n.add("slo_target_us", integer(t.slo_target_us));
}

Node client(const ClientSpec& c) {
  Node n = Node::mapping();
  traffic_head(n, c);
  if (c.prefix_length != 0) n.add("prefix_length", integer(c.prefix_length));
  n.add("streaming", boolean(c.streaming));
  if (c.network) {
    Node net = Node::mapping();
    net.add("rtt_ms", number(c.network->rtt_ms));
    if (c.network->bandwidth_mbps != 0) net.add("bandwidth_mbps", number(c.network->bandwidth_mbps));
    n.add("network", std::move(net));
  }
  if (c.lifecycle) {
    Node windows = Node::sequence();
    for (const LifecycleWindow& w : *c.lifecycle) {
      Node win = Node::mapping();
      win.add("start_us", integer(w.start_us));
      win.add("end_us", integer(w.end_us));
      windows.seq.push_back(std::move(win));
    }
    Node life = Node::mapping();
    life.add("windows", std::move(windows));
    n.add("lifecycle", std::move(life));
  }
  if (c.multimodal) {
    const MultimodalSpec& m = *c.multimodal;
    Node mm = Node::mapping();
    const std::pair<const char*, const DistSpec*> dists[] = {
        {"text_distribution", &m.text_distribution},
        {"image_distribution", &m.image_distribution},
        {"image_count_distribution", &m.image_count_distribution},
        {"audio_distribution", &m.audio_distribution},
        {"audio_count_distribution", &m.audio_count_distribution},
        {"video_distribution", &m.video_distribution},
        {"video_count_distribution", &m.video_count_distribution}};
    for (const auto& [key, d] : dists)
      if (!dist_empty(*d)) mm.add(key, dist(*d));
    n.add("multimodal", std::move(mm));
  }
  if (c.reasoning) {
    Node r = Node::mapping();
    if (!dist_empty(c.reasoning->reason_ratio_distribution))
      r.add("reason_ratio_distribution", dist(c.reasoning->reason_ratio_distribution));
    if (const auto& mt = c.reasoning->multi_turn) {
      Node t = Node::mapping();
      t.add("max_rounds", integer(mt->max_rounds));
      t.add("think_time_us", integer(mt->think_time_us));
      if (!mt->context_growth.empty()) t.add("context_growth", text(mt->context_growth));
      t.add("single_session", boolean(mt->single_session));
      r.add("multi_turn", std::move(t));
    }
    n.add("reasoning", std::move(r));
  }
  return n;
}

Node cohort(const CohortSpec& c) {
  Node n = Node::mapping();
  traffic_head(n, c);
  n.add("streaming", boolean(c.streaming));
  n.add("population", integer(c.population));
  if (c.diurnal) {
    Node d = Node::mapping();
    d.add("peak_hour", integer(c.diurnal->peak_hour));
    d.add("peak_to_trough_ratio", number(c.diurnal->peak_to_trough_ratio));
    n.add("diurnal", std::move(d));
  }
  if (c.spike) {
    Node s = Node::mapping();
    s.add("start_time_us", integer(c.spike->start_time_us));
    s.add("duration_us", integer(c.spike->duration_us));
    n.add("spike", std::move(s));
  }
  if (c.drain) {
    Node d = Node::mapping();
    d.add("start_time_us", integer(c.drain->start_time_us));
    d.add("ramp_duration_us", integer(c.drain->ramp_duration_us));
    n.add("drain", std::move(d));
  }
  return n;
}

Node spec_node(const WorkloadSpec& s) {
  Node n = Node::mapping();
  n.add("version", text(s.version));
  n.add("seed", integer(s.seed));
  n.add("category", text(s.category));
  Node clients = Node::sequence();
  for (const ClientSpec& c : s.clients) clients.seq.push_back(client(c));
  n.add("clients", std::move(clients));
  if (!s.cohorts.empty()) {
    Node cohorts = Node::sequence();
    for (const CohortSpec& c : s.cohorts) cohorts.seq.push_back(cohort(c));
    n.add("cohorts", std::move(cohorts));
  }
  n.add("aggregate_rate", number(s.aggregate_rate));
  if (s.horizon != 0) n.add("horizon", integer(s.horizon));
  if (s.num_requests != 0) n.add("num_requests", integer(s.num_requests));
  if (s.servegen_data) {
    Node sg = Node::mapping();
    sg.add("path", text(s.servegen_data->path));
    if (s.servegen_data->span_start != 0) sg.add("span_start", integer(s.servegen_data->span_start));
    if (s.servegen_data->span_end != 0) sg.add("span_end", integer(s.servegen_data->span_end));
    n.add("servegen_data", std::move(sg));
  }
  if (s.inference_perf) {
    Node ip = Node::mapping();
    Node stages = Node::sequence();
    for (const InferencePerfStage& st : s.inference_perf->stages) {
      Node e = Node::mapping();
      e.add("rate", number(st.rate));
      e.add("duration", integer(st.duration));
      stages.seq.push_back(std::move(e));
    }
    ip.add("stages", std::move(stages));
    if (const auto& sp = s.inference_perf->shared_prefix) {
      Node p = Node::mapping();
      p.add("num_unique_system_prompts", integer(sp->num_unique_system_prompts));
      p.add("num_users_per_system_prompt", integer(sp->num_users_per_system_prompt));
      p.add("system_prompt_len", integer(sp->system_prompt_len));
      p.add("question_len", integer(sp->question_len));
      p.add("output_len", integer(sp->output_len));
      p.add("enable_multi_turn_chat", boolean(sp->enable_multi_turn_chat));
      ip.add("shared_prefix", std::move(p));
    }
    n.add("inference_perf", std::move(ip));
  }
  return n;
}

// ---- layout ----
// The reference's library indents a mapping's children 4 columns past the
// mapping's own indentation, and a sequence's "- " at that indentation; the
// first key of a mapping in a sequence follows the "- ", so its keys sit 2
// columns past the dash while its children's indentation counts from the dash.

void emit_map(std::string& out, const Node& map, size_t key_col, size_t child_col, bool first_inline);

void emit_value(std::string& out, const Node& v, size_t child_col) {
  if (v.kind == Node::Kind::kScalar) {
    out += " " + v.scalar + "\n";
  } else if (v.empty()) {
    out += v.kind == Node::Kind::kMap ? " {}\n" : " []\n";
  } else if (v.kind == Node::Kind::kMap) {
    out += "\n";
    emit_map(out, v, child_col, child_col + 4, false);
  } else {
    out += "\n";
    for (const Node& item : v.seq) {
      out += std::string(child_col, ' ') + "-";
      if (item.kind == Node::Kind::kMap && !item.empty()) {
        out += " ";
        emit_map(out, item, child_col + 2, child_col + 4, true);
      } else {
        emit_value(out, item, child_col + 4);
      }
    }
  }
}

void emit_map(std::string& out, const Node& map, size_t key_col, size_t child_col, bool first_inline) {
  bool first = true;
  for (size_t i = 0; i < map.keys.size(); ++i) {
    if (!(first && first_inline)) out += std::string(key_col, ' ');
    first = false;
    out += map.keys[i] + ":";
    emit_value(out, map.seq[i], child_col);
  }
}

}  // namespace

std::string workload_spec_yaml(const WorkloadSpec& spec) {
  std::string out;
  emit_map(out, spec_node(spec), 0, 4, false);
  return out;
}

}  // namespace blis
