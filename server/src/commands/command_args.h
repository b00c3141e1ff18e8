#pragma once
// A compact notation for a command's arguments, expanded into COMMAND DOCS's "arguments"
// structure (what redis-cli builds its interactive hints from):
//
//   key:key value:string [condition:(NX|XX)] [GET] [expiration:(EX=seconds:integer|KEEPTTL)]
//
//   name:type         an argument (type: key, string, integer, double, pattern, unix-time)
//   TOKEN=name:type   an argument introduced by a token (EX seconds)
//   TOKEN             a pure token (name = token in lower case)
//   name:(a|b|...)    one of several alternatives
//   [ ... ]           optional;  a trailing '*' (after ']' or an argument) repeats
//   {name: a b ...}   a block of arguments given together
#include <string_view>

#include "latch/protocol/reply_writer.h"

namespace latch {

// Writes the "arguments" array for `notation`. Returns false (and writes nothing) when the
// notation is malformed, which a unit test checks for every registered command.
bool WriteCommandArguments(protocol::ReplyWriter& out, std::string_view notation);

}  // namespace latch
