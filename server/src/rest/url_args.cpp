#include "rest/url_args.h"

#include "rest/rest_text.h"

namespace latch::rest {
namespace {

constexpr char kBadEscape[] = "ERR invalid percent-encoding in the request URL";

bool Decode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexDigitValue(in[i + 1]);
      const int lo = HexDigitValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

// Calls fn(name, value, has_value) for each '&'-separated parameter.
template <class Fn>
bool ForEachParam(std::string_view query, Fn&& fn) {
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t eq = param.find('=');
    const bool has_value = eq != std::string_view::npos;
    if (!fn(param.substr(0, eq), has_value ? param.substr(eq + 1) : std::string_view(),
            has_value)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Target SplitTarget(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

bool DecodePathSegment(std::string_view in, std::string* out) { return Decode(in, false, out); }
bool DecodeQueryComponent(std::string_view in, std::string* out) { return Decode(in, true, out); }

ArgsError PathArgs(std::string_view path, std::int64_t max_bulk_len, Args* out) {
  out->clear();
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return std::nullopt;
  for (;;) {
    const std::size_t slash = path.find('/');
    out->emplace_back();
    if (!DecodePathSegment(path.substr(0, slash), &out->back())) return kBadEscape;
    if (static_cast<std::int64_t>(out->back().size()) > max_bulk_len) return kBulkTooLongError;
    if (slash == std::string_view::npos) return std::nullopt;
    path.remove_prefix(slash + 1);
  }
}

ArgsError QueryArgs(std::string_view query, std::int64_t max_bulk_len, Args* out) {
  ArgsError error;
  ForEachParam(query, [&](std::string_view name, std::string_view value, bool has_value) {
    std::string decoded;
    if (!DecodeQueryComponent(name, &decoded)) {
      error = kBadEscape;
      return false;
    }
    if (decoded == "_token") return true;
    out->push_back(std::move(decoded));
    if (!has_value) return true;
    out->emplace_back();
    if (!DecodeQueryComponent(value, &out->back())) {
      error = kBadEscape;
      return false;
    }
    if (static_cast<std::int64_t>(out->back().size()) > max_bulk_len) {
      error = kBulkTooLongError;
      return false;
    }
    return true;
  });
  return error;
}

std::optional<std::string> QueryToken(std::string_view query) {
  std::optional<std::string> token;
  ForEachParam(query, [&](std::string_view name, std::string_view value, bool) {
    if (name != "_token") return true;
    std::string decoded;
    if (DecodeQueryComponent(value, &decoded)) token = std::move(decoded);
    return false;
  });
  return token;
}

}  // namespace latch::rest
