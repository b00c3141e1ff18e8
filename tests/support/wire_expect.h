#pragma once
// Small helpers shared by the wire tests: the raw bytes of a bulk reply, and (eventually.h)
// a bounded poll for effects of the server's periodic tick (active expiry, idle timeout, lock
// hand-off on expiry), which runs on real time whatever the manual clock says.
#include <string>
#include <string_view>

#include "support/eventually.h"

namespace latch::test {

inline std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

}  // namespace latch::test
