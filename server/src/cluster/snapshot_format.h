#pragma once
// The bytes of a cluster snapshot as libraft keeps them (docs/CLUSTER.md, "Snapshots"):
// "LATCHSN2", the length and the XXH3-64 of the body (8 bytes each, little-endian), then the
// body: the member section's length (8 bytes), the member section (member_table.h: one "set"
// line per member with a replicated client address) and the journal base's records.
// "LATCHSN1", written before member entries existed, is the same header over the records
// alone; it is still read, with an empty member section. Pure functions.
#include <string>
#include <string_view>

namespace latch::cluster {

std::string EncodeSnapshot(std::string_view members, std::string_view records);
// The parts of `bytes` (views into it); false when they are not a whole latchd snapshot
// (short, another magic, a length or a checksum that does not match).
bool SnapshotParts(std::string_view bytes, std::string_view* records, std::string_view* members);

}  // namespace latch::cluster
