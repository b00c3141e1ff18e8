#pragma once
// A client's argument as Redis shows it inside an error message. Redis formats those texts
// with "%s", which stops at the argument's first NUL byte: `foo\0bar` is named 'foo' (the
// line breaks before it become spaces when the error is written, ReplyWriter::Error).
#include <string_view>

namespace latch::protocol {

// The bytes of `arg` before its first NUL (all of it when it has none); a view into `arg`.
inline std::string_view ErrorArg(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

}  // namespace latch::protocol
