#pragma once
// Reads the JSON bodies of the REST endpoint into command arguments: one command
// (["SET","k","v","PX",10000]) for POST /, a list of commands ([["SET","k","v"],["GET","k"]])
// for /pipeline and /multi-exec.
//
// Our own small reader rather than a JSON DOM: a number keeps its exact source text (a DOM
// turns 1e3 into 1000 and rounds big integers), nothing is allocated but the arguments, and
// anything deeper than the two levels a pipeline needs is refused where it starts.
// Std only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::rest {

using Args = std::vector<std::string>;

// Errors are returned as the text of a Redis-style error ("ERR ..."); nullopt is success.
using ArgsError = std::optional<std::string>;

// An element may be a string (its bytes, escapes decoded, invalid surrogates as U+FFFD), a
// number (its source text) or a boolean ("true"/"false", as @upstash/redis sends them).
// Null, objects and nested arrays are refused, as is an argument longer than max_bulk_len
// (proto-max-bulk-len, with RESP's error text) and an empty command.
ArgsError ParseJsonCommand(std::string_view body, std::int64_t max_bulk_len, Args* out);
// A non-empty array of commands, each as above.
ArgsError ParseJsonCommandList(std::string_view body, std::int64_t max_bulk_len,
                               std::vector<Args>* out);

}  // namespace latch::rest
