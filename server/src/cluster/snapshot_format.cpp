#include "cluster/snapshot_format.h"

#include <cstdint>

#include "cluster/little_endian.h"
#include "store/value_digest.h"

namespace latch::cluster {
namespace {

constexpr std::string_view kSnapshotFormatV1 = "LATCHSN1";
constexpr std::string_view kSnapshotFormatV2 = "LATCHSN2";
constexpr std::size_t kSnapshotFormatHeader = 24;

}  // namespace

std::string EncodeSnapshot(std::string_view members, std::string_view records) {
  // Built in place (a snapshot can be megabytes): the header's length and checksum last.
  std::string out;
  out.reserve(kSnapshotFormatHeader + 8 + members.size() + records.size());
  out += kSnapshotFormatV2;
  out.append(16, '\0');
  AppendLeU64(&out, members.size());
  out += members;
  out += records;
  const std::string_view body = std::string_view(out).substr(kSnapshotFormatHeader);
  std::string header;
  AppendLeU64(&header, body.size());
  AppendLeU64(&header, ValueDigest(body));
  out.replace(8, 16, header);
  return out;
}

bool SnapshotParts(std::string_view bytes, std::string_view* records, std::string_view* members) {
  if (bytes.size() < kSnapshotFormatHeader) return false;
  const std::string_view magic = bytes.substr(0, 8);
  if (magic != kSnapshotFormatV2 && magic != kSnapshotFormatV1) return false;
  if (LoadLeU64(bytes.substr(8)) != bytes.size() - kSnapshotFormatHeader) return false;
  std::string_view body = bytes.substr(kSnapshotFormatHeader);
  if (ValueDigest(body) != LoadLeU64(bytes.substr(16))) return false;
  *members = {};
  if (magic == kSnapshotFormatV2) {
    if (body.size() < 8 || LoadLeU64(body) > body.size() - 8) return false;
    *members = body.substr(8, LoadLeU64(body));
    body.remove_prefix(8 + members->size());
  }
  *records = body;
  return true;
}

}  // namespace latch::cluster
