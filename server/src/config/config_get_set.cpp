#include "config/config_get_set.h"

#include "config/config_directives.h"
#include "config/config_values.h"
#include "config/encoding_thresholds.h"
#include "config/ignored_directives.h"
#include "glob_match.h"
#include "latch/protocol/error_arg.h"

namespace latch::config {
namespace {

std::string SetFailed(std::string_view argument, std::string_view reason) {
  std::string text = "ERR CONFIG SET failed (possibly related to argument '";
  text += argument;
  text += "') - ";
  text += reason;
  return text;
}

// The encoding thresholds CONFIG GET shows (both names of an aliased one, as Redis does).
void AppendEncodingThresholds(std::string_view pattern, bool is_glob,
                              std::vector<std::pair<std::string, std::string>>* out) {
  for (const IgnoredDirective& d : IgnoredDirectives()) {
    if (!IsEncodingThreshold(d.name)) continue;
    if (is_glob ? !GlobMatch(pattern, d.name, /*nocase=*/true)
                : !EqualsIgnoreCase(pattern, d.name)) {
      continue;
    }
    const std::string name = is_glob ? std::string(d.name) : std::string(pattern);
    bool seen = false;
    for (const auto& pair : *out) seen = seen || pair.first == name;
    if (seen) continue;
    if (auto value = EncodingThresholdValue(d.name)) out->emplace_back(name, *value);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ConfigGet(
    const Options& options, std::span<const std::string_view> patterns) {
  const std::span<const ConfigDirective> directives = ConfigDirectives();
  std::vector<bool> seen(directives.size(), false);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view pattern : patterns) {
    const bool is_glob = pattern.find_first_of("*?[") != std::string_view::npos;
    for (std::size_t i = 0; i < directives.size(); ++i) {
      if (seen[i]) continue;
      const ConfigDirective& d = directives[i];
      if (is_glob ? !GlobMatch(pattern, d.name, /*nocase=*/true)
                  : FindConfigDirective(pattern) != &d) {
        continue;
      }
      seen[i] = true;
      out.emplace_back(is_glob ? std::string(d.name) : std::string(pattern), d.get(options));
    }
    AppendEncodingThresholds(pattern, is_glob, &out);
  }
  return out;
}

// The encoding thresholds of data types (config/encoding_thresholds.h) are runtime settings
// in Redis that latchd has no use for: CONFIG SET checks the value by Redis's rules and
// accepts it without effect, as the config file does. Nothing else ignored is settable at
// run time.
namespace {
std::optional<std::string> CheckIgnoredSet(std::string_view name, std::string_view value) {
  const IgnoredDirective* ignored = FindIgnoredDirective(name);
  if (ignored == nullptr || !IsEncodingThreshold(ignored->name)) {
    return "ERR Unknown option or number of arguments for CONFIG SET - '" +
           std::string(protocol::ErrorArg(name)) + "'";
  }
  if (auto reason = CheckIgnoredDirective(*ignored, {std::string(name), std::string(value)})) {
    return SetFailed(name, *reason);
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> ConfigSet(Options& options, std::span<const std::string_view> args,
                                     bool allow_protected) {
  const std::span<const ConfigDirective> directives = ConfigDirectives();
  std::vector<bool> seen(directives.size(), false);
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const ConfigDirective* d = FindConfigDirective(args[i]);
    if (d == nullptr) {
      if (auto error = CheckIgnoredSet(args[i], args[i + 1])) return error;
      continue;
    }
    if (!d->runtime_settable) return SetFailed(args[i], "can't set immutable config");
    if (d->protected_config && !allow_protected) {
      return SetFailed(args[i], "can't set protected config");
    }
    const auto index = static_cast<std::size_t>(d - directives.data());
    if (seen[index]) return SetFailed(args[i], "duplicate parameter");
    seen[index] = true;
  }
  Options updated = options;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const ConfigDirective* d = FindConfigDirective(args[i]);
    if (d == nullptr) continue;  // an encoding threshold, checked above
    if (std::optional<std::string> reason = d->set(updated, args[i + 1])) {
      return SetFailed(args[i], *reason);
    }
  }
  options = std::move(updated);
  return std::nullopt;
}

}  // namespace latch::config
