#pragma once
// Fault injection rules: what a test arms so that the server misbehaves on purpose. The same
// rules are armed in-process (ScopedServer::InjectFault) and from any client with TEST.FAULT
// (latchd --enable-test-commands yes); docs/TESTING.md lists both forms.
#include <cstdint>
#include <string>

namespace latch::testing {

enum class FaultAction : std::uint8_t {
  kError,      // the command is not run; the client gets `error` instead of its reply
  kTimeout,    // the command is not run and never answered (the client's call times out)
  kDropReply,  // the command IS applied, its reply is dropped and the connection closed
  kDelay,      // the command runs `delay_ms` later (real time); the connection's later
               // commands wait behind it, as on a slow link
};

struct FaultRule {
  FaultAction action = FaultAction::kError;
  // Which commands it hits: a command name (case-insensitive, "set", "lock.acquire"; empty =
  // any) and/or a glob on the command's first key (empty = any; keyless commands never match
  // a pattern). TEST.* commands are never hit, so that a suite can always clear its faults.
  std::string command;
  std::string key_pattern;
  // How many matching commands are hit before the rule disarms itself; 0 = until cleared.
  std::int64_t count = 1;
  // Each matching command is hit with this probability, drawn from a generator seeded with
  // `seed`: the same seed and the same sequence of matching commands hit the same ones.
  double probability = 1.0;
  std::uint64_t seed = 0;
  std::string error = "ERR injected fault";  // kError: the reply, without the leading '-'
  std::int64_t delay_ms = 0;                 // kDelay
};

// Counted since the server started (or the last TEST.RESET / ScopedServer::ResetFaults);
// INFO shows them in its "# Faults" section.
struct FaultCounts {
  std::uint64_t errors = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t dropped_replies = 0;
  std::uint64_t delays = 0;
  std::uint64_t paused_commands = 0;  // commands held by a whole-server pause
  std::uint64_t stalls = 0;           // threads stopped at a stall point (TEST.FAULT STALL)
  std::uint64_t total() const {
    return errors + timeouts + dropped_replies + delays + paused_commands + stalls;
  }
};

}  // namespace latch::testing
