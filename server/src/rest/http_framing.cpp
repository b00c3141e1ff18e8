#include "rest/http_framing.h"

#include <vector>

#include "commands/arg_parse.h"

namespace latch::rest {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The codings of a Transfer-Encoding list, in order ("gzip, chunked" -> gzip, chunked);
// empty list elements are skipped, as RFC 9110 section 5.6.1 allows.
void SplitCodings(std::string_view value, std::vector<std::string_view>* out) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    std::string_view coding = Trim(value.substr(0, comma));
    if (!coding.empty()) out->push_back(coding);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

FramingError Bad(std::string_view why) {
  return {400, "ERR malformed HTTP request: " + std::string(why)};
}

}  // namespace

std::optional<FramingError> CheckFraming(unsigned version,
                                         std::span<const std::string_view> transfer_encodings,
                                         bool has_content_length) {
  if (transfer_encodings.empty()) return std::nullopt;
  // RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
  if (version < 11) return Bad("Transfer-Encoding in an HTTP/1.0 request");
  // RFC 9112 6.3: both is a smuggling attempt until shown otherwise; a server may refuse it.
  if (has_content_length) return Bad("both Transfer-Encoding and Content-Length");
  std::vector<std::string_view> codings;
  for (std::string_view v : transfer_encodings) SplitCodings(v, &codings);
  // RFC 9112 6.3: chunked must be the final coding of a request, else its length is unknown.
  if (codings.empty() || !EqualsNoCase(codings.back(), "chunked")) {
    return Bad("Transfer-Encoding must end with chunked");
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (EqualsNoCase(codings[i], "chunked")) return Bad("chunked applied more than once");
    // RFC 9112 6.1: a coding the server does not understand is answered 501.
    return FramingError{501, "ERR unsupported Transfer-Encoding '" +
                                 std::string(codings[i].substr(0, 64)) +
                                 "': only chunked is accepted"};
  }
  return std::nullopt;
}

}  // namespace latch::rest
