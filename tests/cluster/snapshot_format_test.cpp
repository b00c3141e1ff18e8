// The bytes of a cluster snapshot (cluster/snapshot_format.h): the member section beside the
// records, and a snapshot written before member entries existed ("LATCHSN1") still read.
#include "cluster/snapshot_format.h"

#include <gtest/gtest.h>

#include <string>

#include "cluster/member_table.h"
#include "store/value_digest.h"

namespace latch::cluster {
namespace {

std::string U64(std::uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

TEST(SnapshotFormat, CarriesTheMemberSectionBesideTheRecords) {
  const std::string records = "*2\r\n$11\r\nLATCH.FENCE\r\n$1\r\n7\r\n";
  const std::string members = EncodeMemberSection({{4, {"10.0.0.4", 6384}}});
  const std::string bytes = EncodeSnapshot(members, records);
  EXPECT_EQ(bytes.substr(0, 8), "LATCHSN2");
  std::string_view r, m;
  ASSERT_TRUE(SnapshotParts(bytes, &r, &m));
  EXPECT_EQ(r, records);
  EXPECT_EQ(m, members);
  // Any byte changed, or one missing, is refused whole.
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_FALSE(SnapshotParts(bad, &r, &m)) << i;
  }
  EXPECT_FALSE(SnapshotParts(std::string_view(bytes).substr(0, bytes.size() - 1), &r, &m));
}

TEST(SnapshotFormat, ReadsAVersion1SnapshotWithNoMembers) {
  const std::string records = "*2\r\n$11\r\nLATCH.FENCE\r\n$1\r\n7\r\n";
  const std::string v1 = "LATCHSN1" + U64(records.size()) + U64(ValueDigest(records)) + records;
  std::string_view r, m = "unset";
  ASSERT_TRUE(SnapshotParts(v1, &r, &m));
  EXPECT_EQ(r, records);
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(SnapshotParts("LATCHSN3" + v1.substr(8), &r, &m));
}

}  // namespace
}  // namespace latch::cluster
