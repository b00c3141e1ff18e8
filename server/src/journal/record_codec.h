#pragma once
// The journal's records: RESP arrays of bulk strings, exactly as Redis writes its AOF, so that
// redis-check-aof reads a latchd journal. A record states the *resulting* state of one key
// (never the command that produced it), which makes replay idempotent: applying a record twice,
// or a base snapshot followed by records already reflected in it, gives the same keyspace.
//
//   SET key value [PXAT ms]                 a plain string key (deadline as absolute Unix ms)
//   DEL key                                 the key is gone (deleted or expired)
//   LATCH.LOCK key owner token [PXAT ms]    a key granted by LOCK.ACQUIRE with its fencing token
//   LATCH.FENCE token                       the fencing counter has reached at least `token`
//   LATCH.FLUSHSHARD index count            every key of shard `index` of `count` is gone
//                                           (FLUSHALL reports shard by shard)
//   SELECT db                               the records that follow are of database `db`
//                                           (each file starts in database 0)
//   SWAPDB a b                              databases a and b exchanged their keys
//
// LATCH.* are latchd's own commands; only the loader accepts them (a client sending one gets
// "unknown command").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch::journal {

// Appenders: each appends one whole record to *out. deadline_wall_ms 0 = no expiry.
void EncodeSet(std::string* out, std::string_view key, std::string_view value,
               std::int64_t deadline_wall_ms);
void EncodeLock(std::string* out, std::string_view key, std::string_view owner, std::uint64_t token,
                std::int64_t deadline_wall_ms);
void EncodeDel(std::string* out, std::string_view key);
void EncodeFence(std::string* out, std::uint64_t token);
void EncodeFlushShard(std::string* out, int index, int count);
// SELECT db: the records after it (until the next SELECT) are of database `db`.
void EncodeSelect(std::string* out, int db);
// SWAPDB a b: databases a and b exchanged their keys.
void EncodeSwapDb(std::string* out, int a, int b);
// Redis's aof-timestamp-enabled annotation: "#TS:<unix seconds>\r\n".
void EncodeTimestamp(std::string* out, std::int64_t unix_s);

// Reads records back from a file's bytes. Views point into the caller's buffer.
class RecordReader {
 public:
  enum class Result { kRecord, kEnd, kTruncated, kBadFormat };
  explicit RecordReader(std::string_view data) : data_(data) {}
  // Next record into args (annotations are skipped). kTruncated: the bytes end inside a record
  // (a crash mid-write); kBadFormat: anything else that is not a RESP array of bulk strings.
  Result Next(std::vector<std::string_view>* args);
  // Offset just past the last whole record (where a torn tail is cut).
  std::size_t valid_up_to() const { return valid_; }

 private:
  // Reads "<c><integer>\r\n" at pos_; kRecord on success.
  Result ReadHeader(char c, std::int64_t* n);

  std::string_view data_;
  std::size_t pos_ = 0;
  std::size_t valid_ = 0;
};

}  // namespace latch::journal
