#pragma once
// State shared between a running script (its Lua count hook, on the script's thread) and
// SCRIPT KILL (any thread). Owned by the ScriptEngine; one script runs at a time.
#include <atomic>
#include <cstdint>
#include <functional>

#include "latch/clock.h"

namespace latch::scripting {

struct RunControl {
  // Set for the duration of one Lua run by the engine, read by the hook.
  const Clock* clock = nullptr;
  std::int64_t start_mono_ms = 0;
  std::int64_t limit_ms = 5000;        // lua-time-limit at the script's start
  std::atomic<bool>* busy = nullptr;   // ServerState::script_busy
  bool timed_out = false;              // the hook has set *busy for this run
  // Run by the hook right after it set *busy: the scripts queued behind this one are
  // answered BUSY (ScriptThread::RefuseQueued). Set once by the engine.
  std::function<void()> on_busy;

  std::atomic<bool> running{false};
  std::atomic<bool> wrote{false};           // a write command ran: SCRIPT KILL refuses
  std::atomic<bool> kill_requested{false};  // SCRIPT KILL accepted: the hook raises
};

}  // namespace latch::scripting
