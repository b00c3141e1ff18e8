#pragma once
// The encoding thresholds of Redis's data types (hash-max-listpack-entries,
// zset-max-ziplist-value, set-max-intset-entries, ...). latchd's hashes and sorted sets
// switch layout at fixed sizes (store/hash_value.h, store/object_encoding.cpp), so CONFIG SET
// of a threshold is checked by Redis's rules and has no effect, and CONFIG GET shows the
// value latchd follows (Redis 7.0's default for types latchd does not have). Clients and
// Redis's own test suite save a threshold with CONFIG GET and put it back with CONFIG SET:
// both must work.
#include <optional>
#include <string>
#include <string_view>

namespace latch::config {

// True for a directive named like an encoding threshold.
bool IsEncodingThreshold(std::string_view name);
// The value CONFIG GET shows for a threshold; nullopt for a name Redis 7.0's CONFIG GET does
// not show (list-max-ziplist-entries, a config-file-only leftover).
std::optional<std::string> EncodingThresholdValue(std::string_view name);

}  // namespace latch::config
