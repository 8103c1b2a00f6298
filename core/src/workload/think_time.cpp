// HEAD's think-time distributions (workload/think_time.hpp).
#include "workload/think_time.hpp"

#include <blis/errors.hpp>

#include <charconv>
#include <cmath>
#include <map>

namespace blis::workload {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

bool parse_double(const std::string& text, double& out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;
  const auto [ptr, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && ptr == e;
}

// A time: NUMBER with us, ms or s (bare: ms), finite and >= 0, in whole µs.
int64_t parse_time(const std::string& text, const std::string& where, const std::string& what) {
  double scale = 1000;
  std::string number = text;
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return text.size() >= s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("us")) scale = 1, number = text.substr(0, text.size() - 2);
  else if (ends("ms")) scale = 1000, number = text.substr(0, text.size() - 2);
  else if (ends("s")) scale = 1e6, number = text.substr(0, text.size() - 1);
  double v = 0;
  if (!parse_double(number, v))
    throw InputError(where, "invalid " + what + " '" + text + "': a time such as 500ms, 3s or 250us (bare: ms)");
  if (!std::isfinite(v) || v < 0)
    throw InputError(where, "invalid " + what + " '" + text + "': must be a finite time >= 0");
  return static_cast<int64_t>(v * scale);
}

double parse_number(const std::string& text, const std::string& where, const std::string& what) {
  double v = 0;
  if (!parse_double(text, v) || !std::isfinite(v))
    throw InputError(where, "lognormal: " + what + " must be a finite number, got '" + text + "'");
  return v;
}

}  // namespace

ThinkTimeDist parse_think_time_dist(const std::string& text, const std::string& where) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError(where, "must be TYPE:KEY=VALUE,... (lognormal:mu=2.0,sigma=0.6,min=3s,max=30s or "
                            "constant:value=500ms), got '" + text + "'");
  const std::string type = text.substr(0, colon);
  std::map<std::string, std::string> params;
  std::string rest = text.substr(colon + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    const size_t comma = std::min(rest.find(',', start), rest.size());
    const std::string kv = trim(rest.substr(start, comma - start));
    start = comma + 1;
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) throw InputError(where, type + ": invalid parameter '" + kv + "': expected key=value");
    const std::string key = kv.substr(0, eq);
    if (!params.emplace(key, kv.substr(eq + 1)).second)
      throw InputError(where, type + ": duplicate parameter '" + key + "'");
  }
  auto take = [&](const char* key) -> std::optional<std::string> {
    const auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    std::string v = it->second;
    params.erase(it);
    return v;
  };
  ThinkTimeDist d;
  if (type == "lognormal") {
    const auto mu = take("mu"), sigma = take("sigma");
    if (!mu) throw InputError(where, "lognormal needs the parameter mu");
    if (!sigma) throw InputError(where, "lognormal needs the parameter sigma");
    d.lognormal = true;
    d.mu = parse_number(*mu, where, "mu") + std::log(1e6);  // log-space of seconds -> of µs
    d.sigma = parse_number(*sigma, where, "sigma");
    if (d.sigma <= 0) throw InputError(where, "lognormal: sigma must be > 0, got '" + *sigma + "'");
    if (const auto v = take("min")) d.min_us = parse_time(*v, where, "min");
    if (const auto v = take("max")) d.max_us = parse_time(*v, where, "max");
    if (d.min_us > 0 && d.max_us > 0 && d.min_us > d.max_us)
      throw InputError(where, "lognormal: min (" + std::to_string(d.min_us) + " µs) must be <= max (" +
                                  std::to_string(d.max_us) + " µs)");
  } else if (type == "constant") {
    const auto v = take("value");
    if (!v) throw InputError(where, "constant needs the parameter value");
    d.value_us = parse_time(*v, where, "value");
  } else {
    throw InputError(where, "unknown type '" + type + "': lognormal or constant");
  }
  if (!params.empty())
    throw InputError(where, type + ": unknown parameter '" + params.begin()->first + "'");
  return d;
}

int64_t sample_think_time(const ThinkTimeDist& d, GoRand& rng) {
  if (!d.lognormal) return std::max<int64_t>(d.value_us, 1);
  const double z = rng.norm_float64();
  const double v = std::exp(d.mu + d.sigma * z);
  if (!std::isfinite(v)) return d.min_us > 0 ? d.min_us : 1;
  auto r = static_cast<int64_t>(std::min(std::round(v), 9.2e18));
  if (d.min_us > 0 && r < d.min_us) r = d.min_us;
  if (d.max_us > 0 && r > d.max_us) r = d.max_us;
  return std::max<int64_t>(r, 1);
}

}  // namespace blis::workload
