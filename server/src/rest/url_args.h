#pragma once
// The path form of the REST endpoint: GET|POST /<command>/<arg>/...?<name>=<value>&...
// Segments are percent-decoded into arguments; query parameters follow as `name value`
// (or `name` alone when it has no '='), except `_token`, which is the credential. A POST
// body, when present, is appended by the caller between the two (Upstash's rule: the body is
// the last positional argument and options go in the query). Std only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rest/json_args.h"

namespace latch::rest {

// A request target split at '?'.
struct Target {
  std::string_view path;   // starts with '/'
  std::string_view query;  // without the '?', may be empty
};
Target SplitTarget(std::string_view target);

// Percent-decodes one path segment ('+' stays '+'); false on a malformed escape.
bool DecodePathSegment(std::string_view in, std::string* out);
// Percent-decodes one query component ('+' is a space, as in HTML forms).
bool DecodeQueryComponent(std::string_view in, std::string* out);

// The arguments of the path ("/set/foo/bar" -> SET foo bar; a trailing '/' adds nothing).
ArgsError PathArgs(std::string_view path, std::int64_t max_bulk_len, Args* out);
// Appends the query's arguments (everything but _token).
ArgsError QueryArgs(std::string_view query, std::int64_t max_bulk_len, Args* out);
// The decoded value of `_token` in the query, if present.
std::optional<std::string> QueryToken(std::string_view query);

}  // namespace latch::rest
