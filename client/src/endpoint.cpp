#include "latch/endpoint.h"

#include <charconv>

namespace latch {
namespace {

bool ParseNumber(std::string_view s, int max, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0 && *out <= max;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size() || HexValue(in[i + 1]) < 0 || HexValue(in[i + 2]) < 0) return false;
    out->push_back(static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2])));
    i += 2;
  }
  return true;
}

Result<Endpoint> Invalid(std::string_view url, std::string_view why) {
  return Result<Endpoint>(Errc::kInvalidArgument,
                          "bad URL '" + std::string(url) + "': " + std::string(why));
}

}  // namespace

Result<Endpoint> Endpoint::Parse(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  constexpr std::string_view kTlsScheme = "rediss://";
  Endpoint ep;
  ep.tls = url.substr(0, kTlsScheme.size()) == kTlsScheme;
  if (!ep.tls && url.substr(0, kScheme.size()) != kScheme) {
    return Invalid(url, "expected redis:// or rediss://");
  }
  std::string_view rest = url.substr(ep.tls ? kTlsScheme.size() : kScheme.size());
  std::string_view path;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = userinfo.find(':');
    std::string_view user = userinfo.substr(0, colon);
    std::string_view pass = colon == std::string_view::npos ? "" : userinfo.substr(colon + 1);
    if (colon == std::string_view::npos) {
      pass = user;  // redis://password@host is how some clients write a bare password
      user = "";
    }
    if (!PercentDecode(user, &ep.user) || !PercentDecode(pass, &ep.password)) {
      return Invalid(url, "bad percent-encoding");
    }
  }
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) return Invalid(url, "unterminated [IPv6] host");
    ep.host.assign(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Invalid(url, "junk after ]");
      port = rest.substr(1);
    }
  } else {
    auto colon = rest.rfind(':');
    ep.host.assign(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (ep.host.empty()) return Invalid(url, "missing host");
  if (!port.empty() && !ParseNumber(port, 65535, &ep.port)) return Invalid(url, "bad port");
  if (!path.empty() && !ParseNumber(path, 1 << 20, &ep.db)) return Invalid(url, "bad db number");
  return ep;
}

std::string Endpoint::ToString() const {
  std::string s = tls ? "rediss://" : "redis://";
  if (!password.empty()) s += user + ":***@";
  s += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  s += ":" + std::to_string(port);
  if (db != 0) s += "/" + std::to_string(db);
  return s;
}

}  // namespace latch
