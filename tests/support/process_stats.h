#pragma once
// What /proc says about a server process a test started: resident and virtual size, CPU
// time. -1 when the process is gone or /proc cannot be read.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace latch::test {

std::int64_t RssBytes(pid_t pid);     // VmRSS
std::int64_t VmSizeBytes(pid_t pid);  // VmSize (what RLIMIT_AS limits)
std::int64_t CpuTimeMs(pid_t pid);    // user + system time
bool ProcessAlive(pid_t pid);
// The CPU time `pid` used per second of real time over the next `window`: for "idle while
// nothing happens", where real time passing is what is measured (no condition to wait for).
// Divided by the real time that actually passed, which a loaded machine may stretch.
double CpuMsPerSecondOver(pid_t pid, std::chrono::milliseconds window);

// The latchd binary the process tests run: $LATCHD_UNDER_TEST when set (to check that a
// test fails on an older build), else this tree's.
std::string LatchdUnderTest();

}  // namespace latch::test
