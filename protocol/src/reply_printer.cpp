// Reply::ToString: the redis-cli-like rendering used by logs, tests and latch-cli.
#include <string>
#include <string_view>

#include "latch/protocol/reply.h"

namespace latch::protocol {
namespace {

void Render(const Reply& r, std::string* out);

void RenderAggregate(const Reply& r, std::string_view open, std::string_view close,
                     std::string* out) {
  out->append(open);
  bool map = r.type == ReplyType::kMap;
  for (std::size_t i = 0; i < r.elements.size(); ++i) {
    if (i > 0) out->append(map && i % 2 == 1 ? ": " : ", ");
    Render(r.elements[i], out);
  }
  out->append(close);
}

// Depth is bounded by the reader's max_depth, so this recursion is bounded too.
void Render(const Reply& r, std::string* out) {
  switch (r.type) {
    case ReplyType::kSimpleString:
      out->append(r.str);
      break;
    case ReplyType::kError:
      out->append("(error) ").append(r.str);
      break;
    case ReplyType::kInteger:
      out->append("(integer) ").append(std::to_string(r.integer));
      break;
    case ReplyType::kBulkString:
    case ReplyType::kVerbatim:
      out->append("\"").append(r.str).append("\"");
      break;
    case ReplyType::kNull:
      out->append("(nil)");
      break;
    case ReplyType::kArray:
      RenderAggregate(r, "[", "]", out);
      break;
    case ReplyType::kMap:
      RenderAggregate(r, "{", "}", out);
      break;
    case ReplyType::kSet:
      RenderAggregate(r, "~{", "}", out);
      break;
    case ReplyType::kPush:
      RenderAggregate(r, ">[", "]", out);
      break;
    case ReplyType::kDouble:
      out->append("(double) ").append(r.str);
      break;
    case ReplyType::kBoolean:
      out->append(r.boolean ? "(true)" : "(false)");
      break;
    case ReplyType::kBigNumber:
      out->append("(big number) ").append(r.str);
      break;
  }
}

}  // namespace

std::string Reply::ToString() const {
  std::string out;
  Render(*this, &out);
  return out;
}

}  // namespace latch::protocol
