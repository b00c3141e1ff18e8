#pragma once
// One RESP2/RESP3 reply as a value (what ReplyReader produces and clients consume).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch::protocol {

enum class ReplyType : std::uint8_t {
  kSimpleString,  // +OK
  kError,         // -ERR ... and RESP3 blob errors (!len)
  kInteger,       // :1
  kBulkString,    // $3 foo
  kNull,          // $-1, *-1, _
  kArray,         // *n
  kMap,           // %n (elements hold key, value, key, value, ...)
  kSet,           // ~n
  kDouble,        // ,3.14 | ,inf | ,-inf | ,nan
  kBoolean,       // #t | #f
  kBigNumber,     // (1234567890123456789012 (digits kept as text in str)
  kVerbatim,      // =15 txt:Some string (format in verbatim_format, text in str)
  kPush,          // >n out-of-band data (pub/sub, client tracking)
};

std::string_view ReplyTypeName(ReplyType type);

// One reply, owning all its data. Aggregates own their elements.
struct Reply {
  ReplyType type = ReplyType::kNull;
  bool boolean = false;
  std::array<char, 3> verbatim_format{};
  std::int64_t integer = 0;
  double number = 0;              // kDouble
  std::string str;                // simple, error, bulk, verbatim text, big number, double text
  std::vector<Reply> elements;    // array, set, push; map: key, value, key, value, ...
  std::vector<Reply> attributes;  // key, value pairs of a preceding RESP3 attribute, if kept

  static Reply Simple(std::string s);
  static Reply Error(std::string s);
  static Reply Integer(std::int64_t v);
  static Reply Bulk(std::string s);
  static Reply Nil() { return Reply{}; }
  static Reply Aggregate(ReplyType type, std::vector<Reply> elements);

  bool is_null() const { return type == ReplyType::kNull; }
  bool is_error() const { return type == ReplyType::kError; }
  bool is_integer() const { return type == ReplyType::kInteger; }
  // Simple, bulk and verbatim strings: the ones whose text is in str.
  bool is_string() const {
    return type == ReplyType::kSimpleString || type == ReplyType::kBulkString ||
           type == ReplyType::kVerbatim;
  }
  bool is_aggregate() const {
    return type == ReplyType::kArray || type == ReplyType::kMap || type == ReplyType::kSet ||
           type == ReplyType::kPush;
  }
  // Map lookup by string key (linear: maps in replies are small). Null when absent or when
  // this reply is not a map (a RESP2 flat array of pairs counts as a map here).
  const Reply* Find(std::string_view key) const;

  // A redis-cli-like rendering for logs, tests and latch-cli.
  std::string ToString() const;

  bool operator==(const Reply& other) const = default;
};

}  // namespace latch::protocol
