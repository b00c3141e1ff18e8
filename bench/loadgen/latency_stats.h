#pragma once
// What a workload measured: latencies (kept whole, bounded by the workload's count limit, and
// sorted once at the end for exact percentiles) and replies by class, printed as one JSON
// object that bench/run.py reads.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reply_scanner.h"

namespace latch::bench {

class LatencyStats {
 public:
  void Reserve(std::size_t n) { ns_.reserve(n); }
  void Add(std::int64_t ns) { ns_.push_back(ns); }
  void Count(const ScannedReply& r);
  std::size_t size() const { return ns_.size(); }

  // Sorts the samples; call once before Percentile().
  void Finish();
  // Latency at quantile q in [0, 1], in microseconds (0 without samples).
  double PercentileUs(double q) const;

  std::int64_t ok = 0, nil = 0, zero = 0, errors = 0;
  std::string first_error;

 private:
  std::vector<std::int64_t> ns_;
};

// Builds a flat JSON object: numbers as given, strings quoted and escaped.
class JsonLine {
 public:
  JsonLine& Num(const std::string& key, double v);
  JsonLine& Str(const std::string& key, const std::string& v);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void Key(const std::string& key);
  std::string body_;
};

// The fields every workload reports: seconds, rps (`units` per second), p50/p99/p999 of the
// samples, and the reply classes.
JsonLine Summary(const LatencyStats& s, double seconds, std::int64_t units);

}  // namespace latch::bench
