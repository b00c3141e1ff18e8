#include "store/float_text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace latch::store {
namespace {

// strtod needs a NUL-terminated text; arguments are views (and may hold NUL bytes, which
// then stop the parse short of the end and fail it, as in Redis).
template <class F, class Parse>
bool ParseWhole(std::string_view s, F* out, Parse parse, bool strict) {
  const std::string text(s);
  const char* buf = text.c_str();
  char* end = nullptr;
  errno = 0;
  const F v = parse(buf, &end);
  if (static_cast<std::size_t>(end - buf) != s.size() || std::isnan(v)) return false;
  if (strict) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    if (errno == ERANGE && (std::isinf(v) || v == 0)) return false;
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseDouble(std::string_view s, double* out) {
  return ParseWhole<double>(s, out, [](const char* b, char** e) { return std::strtod(b, e); },
                            true);
}

bool ParseRangeEnd(std::string_view s, double* out, bool* exclusive) {
  *exclusive = !s.empty() && s[0] == '(';
  if (*exclusive) s.remove_prefix(1);
  return ParseWhole<double>(s, out, [](const char* b, char** e) { return std::strtod(b, e); },
                            false);
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf, static_cast<std::size_t>(n));
}

bool ParseLongDouble(std::string_view s, long double* out) {
  return ParseWhole<long double>(
      s, out, [](const char* b, char** e) { return std::strtold(b, e); }, true);
}

std::string FormatLongDouble(long double v) {
  // "%.17Lf" of a large long double runs to thousands of digits; Redis allows 5 KiB.
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", v);
  if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) return {};
  std::string s(buf, static_cast<std::size_t>(n));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace latch::store
