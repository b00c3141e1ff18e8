#pragma once
// Journal records for hashes and sorted sets. As every record (record_codec.h), they state a
// key's resulting value, here as plain Redis commands wrapped in MULTI/EXEC so that replay
// applies all or none of them and redis-check-aof (and redis-server) read them:
//
//   MULTI
//   DEL key
//   HSET key field value [field value ...]     or   ZADD key score member [score member ...]
//   PEXPIREAT key unix-ms                            (when the key has a TTL)
//   EXEC
//
// Scores are written "%.17g" (inf/-inf), which reads back to the same double. A whole value
// per write: cheap for the small hashes and sets lock libraries keep (a semaphore's holders,
// a Redisson lock's one field), linear in the value's size for big ones.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "latch/clock.h"
#include "store/keyspace.h"

namespace latch::journal {

// Appends the records of a hash or sorted-set object. deadline_wall_ms 0 = no expiry.
void EncodeContainer(std::string* out, const store::Object& o, std::int64_t deadline_wall_ms);

// Replays HSET, ZADD and PEXPIREAT records (the loader's MULTI/EXEC grouping is its own).
// False when the record is not one of these or is malformed.
bool ApplyContainerRecord(store::Keyspace& ks, std::span<const std::string_view> a,
                          const TimeSnapshot& now);

}  // namespace latch::journal
