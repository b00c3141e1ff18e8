#pragma once
// The compare-and-delete and compare-and-extend scripts used on servers without LOCK.*.
// Both answer 1 (done), 0 (held by another owner) or -1 (not held), like LOCK.RELEASE and
// LOCK.EXTEND. The SHA1 constants are checked against SCRIPT LOAD by the tests.
#include <string_view>

namespace latch::client_internal::scripts {

inline constexpr std::string_view kRelease =
    "local v = redis.call('GET', KEYS[1])\n"
    "if v == ARGV[1] then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  return 1\n"
    "end\n"
    "if v then return 0 end\n"
    "return -1\n";
inline constexpr std::string_view kReleaseSha = "c7e88a5fd2c55d0340eddeb3520b9ec79e8f629e";

inline constexpr std::string_view kExtend =
    "local v = redis.call('GET', KEYS[1])\n"
    "if v == ARGV[1] then\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "  return 1\n"
    "end\n"
    "if v then return 0 end\n"
    "return -1\n";
inline constexpr std::string_view kExtendSha = "8ab7631262089bd1781c06c857ce1842bf86375e";

}  // namespace latch::client_internal::scripts
