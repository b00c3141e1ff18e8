#pragma once
// RESP replies as the REST endpoint's JSON, the way Upstash writes them: a string is a JSON
// string, an integer a number, a null null, an array an array. With Upstash-Encoding: base64
// every string is base64 (binary-safe), except an "OK" status that is a command's whole
// result (@upstash/redis leaves a bare "OK" alone and base64-decodes every other string).
// Std and the protocol library only.
#include <string>
#include <string_view>

#include "latch/protocol/reply_reader.h"

namespace latch::rest {

enum class Encoding { kPlain, kBase64 };

// Appends `reply` as a JSON value. `whole_result`: the reply is a command's entire result.
// An error nested inside an array is written as its message string.
void AppendJsonValue(const protocol::Reply& reply, Encoding encoding, bool whole_result,
                     std::string* out);

// Appends `s` as a quoted JSON string. Bytes that are not valid UTF-8 become U+FFFD: plain
// JSON cannot carry them (binary values need the base64 encoding).
void AppendJsonString(std::string_view s, std::string* out);

// Appends the standard base64 (RFC 4648, with padding) of `bytes`.
void AppendBase64(std::string_view bytes, std::string* out);

// {"error":"<message>"}
std::string JsonError(std::string_view message);

}  // namespace latch::rest
