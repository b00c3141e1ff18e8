#include "options.h"

#include <charconv>
#include <string_view>

namespace latch::bench {
namespace {

bool ToInt(std::string_view s, std::int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool ParseOptions(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; i += 2) {
    const std::string_view name = argv[i];
    if (i + 1 >= argc) {
      *error = "missing value after " + std::string(name);
      return false;
    }
    const std::string_view value = argv[i + 1];
    std::int64_t n = 0;
    const bool numeric = ToInt(value, &n);
    auto need_number = [&](std::int64_t* field, std::int64_t min) {
      if (!numeric || n < min) {
        *error = std::string(name) + " needs an integer >= " + std::to_string(min);
        return false;
      }
      *field = n;
      return true;
    };
    std::int64_t tmp = 0;
    bool ok = true;
    if (name == "--mode") {
      if (value == "pipeline") o->mode = Mode::kPipeline;
      else if (value == "cycle") o->mode = Mode::kCycle;
      else if (value == "handoff") o->mode = Mode::kHandoff;
      else {
        *error = "unknown mode " + std::string(value);
        return false;
      }
    } else if (name == "--host") {
      o->host = value;
    } else if (name == "--port") {
      ok = need_number(&tmp, 1) && tmp < 65536;
      o->port = static_cast<int>(tmp);
    } else if (name == "--clients") {
      ok = need_number(&tmp, 1) && tmp <= 10'000;
      o->clients = static_cast<int>(tmp);
    } else if (name == "--pipeline") {
      ok = need_number(&tmp, 1) && tmp <= 10'000;
      o->pipeline = static_cast<int>(tmp);
    } else if (name == "--requests") {
      ok = need_number(&o->requests, 1);
    } else if (name == "--duration-ms") {
      ok = need_number(&o->duration_ms, 1);
    } else if (name == "--keyspace") {
      ok = need_number(&o->keyspace, 1);
    } else if (name == "--seed") {
      ok = need_number(&tmp, 0);
      o->seed = static_cast<std::uint64_t>(tmp);
    } else if (name == "--command") {
      o->command = value;
    } else if (name == "--prefill") {
      o->prefill = value;
    } else if (name == "--prefill-count") {
      ok = need_number(&o->prefill_count, 0);
    } else if (name == "--acquire") {
      o->acquire = value;
    } else if (name == "--release") {
      o->release = value;
    } else if (name == "--hold-ms") {
      ok = need_number(&o->hold_ms, 0);
    } else if (name == "--retry-min-ms") {
      ok = need_number(&o->retry_min_ms, 0);
    } else if (name == "--retry-max-ms") {
      ok = need_number(&o->retry_max_ms, 0);
    } else {
      *error = "unknown option " + std::string(name);
      return false;
    }
    if (!ok) {
      if (error->empty()) *error = "bad value for " + std::string(name);
      return false;
    }
  }
  if (o->port == 0) {
    *error = "--port is required";
    return false;
  }
  if (o->retry_max_ms < o->retry_min_ms) {
    *error = "--retry-max-ms must be >= --retry-min-ms";
    return false;
  }
  const bool pipeline = o->mode == Mode::kPipeline;
  if (pipeline ? o->command.empty() : (o->acquire.empty() || o->release.empty())) {
    *error = pipeline ? "--command is required" : "--acquire and --release are required";
    return false;
  }
  return true;
}

}  // namespace latch::bench
