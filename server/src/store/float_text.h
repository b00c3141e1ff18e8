#pragma once
// Floats as Redis 7.0 reads and writes them: sorted-set scores (strtod, "inf", no NaN, a
// range end may start with "(" for exclusive) printed "%.17g"; HINCRBYFLOAT's long doubles
// printed "%.17Lf" without trailing zeros.
#include <cstddef>
#include <string>
#include <string_view>

namespace latch::store {

// A score or an increment: the whole text must parse, no leading space, no NaN, no
// overflow to infinity or underflow to zero ("inf" itself is fine).
bool ParseDouble(std::string_view s, double* out);
// One end of a score range: "(" makes it exclusive. Redis's range rules: no NaN, the whole
// text must parse (an empty text is 0).
bool ParseRangeEnd(std::string_view s, double* out, bool* exclusive);
// "%.17g", "inf", "-inf": what ZSCORE replies and what the journal records (exact round trip).
std::string FormatDouble(double v);

bool ParseLongDouble(std::string_view s, long double* out);
std::string FormatLongDouble(long double v);

}  // namespace latch::store
