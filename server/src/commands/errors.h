#pragma once
// Redis's error texts, byte for byte, in one place. Replies carry them without the leading
// '-' and CRLF (ReplyWriter adds those).
#include <string_view>

namespace latch::errors {

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kBusyScript =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
// Redis's CLUSTER on a server without cluster mode; latch's RAFT and TEST.FAULT RAFT-* on a
// single latchd.
inline constexpr std::string_view kClusterDisabled =
    "ERR This instance has cluster support disabled";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kDecrOverflow = "ERR decrement would overflow";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr std::string_view kAuthNotConfigured =
    "ERR AUTH <password> called without any password configured for the default user. Are "
    "you sure your configuration is correct?";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kInvalidCursor = "ERR invalid cursor";
inline constexpr std::string_view kNoProto = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kHelloNotInteger =
    "ERR Protocol version is not an integer or out of range";
inline constexpr std::string_view kHelloNoAuth =
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
    "AUTH <user> <pass> option can be used to authenticate the client and select the "
    "RESP protocol version at the same time";
inline constexpr std::string_view kClientNameChars =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr std::string_view kExpireNxIncompatible =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr std::string_view kExpireGtLtIncompatible =
    "ERR GT and LT options at the same time are not compatible";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";

// A Raft cluster node that knows no leader (docs/CLUSTER.md, "No leader"); also a REST request
// a follower could not hand to the leader.
inline constexpr std::string_view kNoRaftLeader = "TRYAGAIN no Raft leader is known, retry later";

}  // namespace latch::errors
