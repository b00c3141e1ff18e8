#pragma once
// The parts of CONFIG GET and CONFIG SET that do not touch a connection: which directives a
// request names and how values are applied, with redis-server 7.0's texts. The command handler
// checks arity itself and writes the reply:
//
//   CONFIG GET with no pattern  -> ERR wrong number of arguments for 'config|get' command
//   CONFIG SET with < 2 args or an odd count
//                               -> ERR wrong number of arguments for 'config|set' command
//
// CONFIG GET replies a flat array (RESP2) or a map (RESP3) of name/value pairs:
//   CONFIG GET maxclients   -> 1) "maxclients" 2) "10000"
//   CONFIG GET timeout      -> 1) "timeout" 2) "0"
//   CONFIG GET proto-max-bulk-len -> "536870912"  (memory values are plain byte counts)
//   CONFIG GET enable-debug-command -> "no"       (yes/no/local)
//   CONFIG GET nosuch       -> empty array
//
// CONFIG SET errors (the reply is "-" + the text + "\r\n"):
//   ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'
//   ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config
//   ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter
//   ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed
//       into an integer                                  (one line in the reply)
//   ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0
//       and 2147483647 inclusive
//   ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be
//       a memory value
//   ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of
//       the following: debug, verbose, notice, warning, nothing
// The quoted name is the argument as the client sent it (case kept). On success the reply is +OK.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latch/options.h"

namespace latch::config {

// The name/value pairs for CONFIG GET's arguments, in the order first matched, each directive
// once. As in Redis 7.0, an argument without any of "*?[" is looked up as a name
// (case-insensitive) and the reply echoes the argument as sent ("CONFIG GET PORT" replies
// "PORT"); any other argument is a glob (GlobMatch, nocase) and replies the directive's own name.
std::vector<std::pair<std::string, std::string>> ConfigGet(
    const Options& options, std::span<const std::string_view> patterns);

// Applies CONFIG SET's name/value pairs (`args.size()` even and >= 2; the caller checks) all or
// nothing: on any error `options` is unchanged and the full error text (without "-" and CRLF) is
// returned. Checks run in argument order, as Redis does: unknown name, immutable, protected
// (unless `allow_protected`: enable-protected-configs for this client), duplicate, then the
// values. After success the caller applies side effects (e.g. the loglevel to spdlog).
std::optional<std::string> ConfigSet(Options& options, std::span<const std::string_view> args,
                                     bool allow_protected = true);

}  // namespace latch::config
