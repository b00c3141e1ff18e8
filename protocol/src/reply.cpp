// Reply, the value a ReplyReader produces: constructors and map lookup.
#include "latch/protocol/reply.h"

#include <utility>

namespace latch::protocol {

std::string_view ReplyTypeName(ReplyType type) {
  switch (type) {
    case ReplyType::kSimpleString:
      return "simple string";
    case ReplyType::kError:
      return "error";
    case ReplyType::kInteger:
      return "integer";
    case ReplyType::kBulkString:
      return "bulk string";
    case ReplyType::kNull:
      return "null";
    case ReplyType::kArray:
      return "array";
    case ReplyType::kMap:
      return "map";
    case ReplyType::kSet:
      return "set";
    case ReplyType::kDouble:
      return "double";
    case ReplyType::kBoolean:
      return "boolean";
    case ReplyType::kBigNumber:
      return "big number";
    case ReplyType::kVerbatim:
      return "verbatim string";
    case ReplyType::kPush:
      return "push";
  }
  return "unknown";
}

Reply Reply::Simple(std::string s) {
  Reply r;
  r.type = ReplyType::kSimpleString;
  r.str = std::move(s);
  return r;
}

Reply Reply::Error(std::string s) {
  Reply r;
  r.type = ReplyType::kError;
  r.str = std::move(s);
  return r;
}

Reply Reply::Integer(std::int64_t v) {
  Reply r;
  r.type = ReplyType::kInteger;
  r.integer = v;
  return r;
}

Reply Reply::Bulk(std::string s) {
  Reply r;
  r.type = ReplyType::kBulkString;
  r.str = std::move(s);
  return r;
}

Reply Reply::Aggregate(ReplyType type, std::vector<Reply> elements) {
  Reply r;
  r.type = type;
  r.elements = std::move(elements);
  return r;
}

const Reply* Reply::Find(std::string_view key) const {
  if (type != ReplyType::kMap && type != ReplyType::kArray) return nullptr;
  for (std::size_t i = 0; i + 1 < elements.size(); i += 2) {
    if (elements[i].is_string() && elements[i].str == key) return &elements[i + 1];
  }
  return nullptr;
}

}  // namespace latch::protocol
