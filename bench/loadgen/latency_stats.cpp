#include "latency_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace latch::bench {

void LatencyStats::Count(const ScannedReply& r) {
  switch (r.cls) {
    case ReplyClass::kOk: ++ok; break;
    case ReplyClass::kNil: ++nil; break;
    case ReplyClass::kZero: ++zero; break;
    case ReplyClass::kError:
      ++errors;
      if (first_error.empty()) first_error = std::string(r.error);
      break;
  }
}

void LatencyStats::Finish() { std::sort(ns_.begin(), ns_.end()); }

double LatencyStats::PercentileUs(double q) const {
  if (ns_.empty()) return 0;
  auto idx = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ns_.size())));
  idx = std::clamp<std::size_t>(idx, 1, ns_.size()) - 1;
  return static_cast<double>(ns_[idx]) / 1000.0;
}

void JsonLine::Key(const std::string& key) {
  if (!body_.empty()) body_.push_back(',');
  body_.append("\"").append(key).append("\":");
}

JsonLine& JsonLine::Num(const std::string& key, double v) {
  Key(key);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(v) ? v : 0.0);
  body_.append(buf);
  return *this;
}

JsonLine& JsonLine::Str(const std::string& key, const std::string& v) {
  Key(key);
  body_.push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') {
      body_.push_back('\\');
      body_.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      body_.push_back(' ');
    } else {
      body_.push_back(c);
    }
  }
  body_.push_back('"');
  return *this;
}

JsonLine Summary(const LatencyStats& s, double seconds, std::int64_t units) {
  JsonLine j;
  j.Num("seconds", seconds)
      .Num("units", static_cast<double>(units))
      .Num("rps", seconds > 0 ? static_cast<double>(units) / seconds : 0)
      .Num("p50_us", s.PercentileUs(0.50))
      .Num("p99_us", s.PercentileUs(0.99))
      .Num("p999_us", s.PercentileUs(0.999))
      .Num("ok", static_cast<double>(s.ok))
      .Num("nil", static_cast<double>(s.nil))
      .Num("zero", static_cast<double>(s.zero))
      .Num("errors", static_cast<double>(s.errors))
      .Str("first_error", s.first_error);
  return j;
}

}  // namespace latch::bench
