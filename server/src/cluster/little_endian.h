#pragma once
// The 8-byte little-endian integers of latchd's Raft entries and snapshots (the nonce and the
// term/index header of an entry, a member entry's marker, a snapshot's lengths): one codec
// for all of them, so that the formats cannot drift apart.
#include <cstdint>
#include <string>
#include <string_view>

namespace latch::cluster {

inline void StoreLeU64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void AppendLeU64(std::string* out, std::uint64_t v) {
  char b[8];
  StoreLeU64(b, v);
  out->append(b, 8);
}
// Reads the first 8 bytes of p (the caller has checked its length).
inline std::uint64_t LoadLeU64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
inline std::uint64_t LoadLeU64(std::string_view p) { return LoadLeU64(p.data()); }

}  // namespace latch::cluster
