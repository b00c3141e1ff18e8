#pragma once
// For the tests that stop latchd at a stall point (TEST.FAULT STALL, docs/TESTING.md) between
// a write and its journal record on disk, and kill -9 it there: whatever a client was told
// before the kill must be in the journal the restart loads. Every wait is bounded.
#include <string>
#include <vector>

#include "support/raw_connection.h"

namespace latch::test {

// Directives: the journal under `appendfsync` = `fsync`, and the test commands.
std::vector<std::string> JournalWithTestCommands(const std::string& fsync = "always");

// Polls `command` on `c` until its reply contains `part` (bounded: 10 s).
bool WaitForReply(RawConnection& c, const std::vector<std::string>& command,
                  const std::string& part);

// Waits (bounded: 10 s) until INFO faults on `c` shows a thread stopped at a stall point.
bool WaitStalled(RawConnection& c);

// After the server died: every byte `c` had been sent before the end of its stream.
std::string Collect(RawConnection& c);

}  // namespace latch::test
