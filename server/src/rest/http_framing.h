#pragma once
// The request framings the REST endpoint accepts (RFC 9112 section 6), checked once the
// header is read and before any of the body: a body is either Content-Length bytes or,
// in HTTP/1.1, chunked, with chunked as its only transfer coding. Anything else leaves the
// body's length open to two readings (request smuggling), so it is refused and the
// connection closed without reading further. Beast's parser refuses some of these cases
// (chunked beside Content-Length, in one order) but frames others by Content-Length or as
// an empty body. No Beast here: plain views of the header's fields.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace latch::rest {

struct FramingError {
  int status;           // 400, or 501 for a transfer coding latchd does not implement
  std::string message;  // the JSON error's text
};

// `transfer_encodings`: the value of every Transfer-Encoding field, in order; `version`:
// 10 or 11. nullopt when the framing is sound.
std::optional<FramingError> CheckFraming(unsigned version,
                                         std::span<const std::string_view> transfer_encodings,
                                         bool has_content_length);

}  // namespace latch::rest
