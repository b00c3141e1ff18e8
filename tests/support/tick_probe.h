#pragma once
// Knowing that the embedded server's worker tick has run after the manual clock moved.
//
// The tick (active expiry, idle timeouts, soft output limits, OBJECT IDLETIME's access clock)
// runs every 1000/hz ms of real time and reads the manual clock. A test that checks what the
// tick did *not* do (a client still open one second into a two-second limit) must know that a
// tick has run at the clock's new time; a sleep of "a few ticks" is a guess a loaded machine
// overruns. TickProbe keeps a key of its own in database 15, whose OBJECT IDLETIME is the
// shard's access clock (moved by the tick only, in whole seconds) minus the key's stamp.
// Once it shows the seconds the clock moved, a tick has read the new time; and with one io
// thread that tick has also finished (idle timeouts and output limits included) before the
// same thread served the OBJECT IDLETIME: give such tests Options::io_threads = 1.
//
//   TickProbe probe(server.port());  // before the test first moves the clock
//   server.clock().advance(1000);
//   ASSERT_TRUE(probe.SawSecondsPass(1));
#include <chrono>
#include <string>

#include "support/raw_connection.h"

namespace latch::test {

class TickProbe {
 public:
  // Creates the probe key. The key's stamp is the shard's access clock as the last tick left
  // it, so the probe must be made before the test moves the clock (or once a tick has caught
  // up with it); ok() says whether the key was made.
  explicit TickProbe(int port);
  bool ok() const { return ok_; }
  // Waits (bounded by `limit` of real time) until a tick has run with the clock at least
  // `seconds` whole seconds past the probe's creation. False on timeout.
  bool SawSecondsPass(int seconds,
                      std::chrono::milliseconds limit = std::chrono::milliseconds(5000));
  // The last OBJECT IDLETIME reply, for failure messages.
  const std::string& last_reply() const { return last_reply_; }

 private:
  RawConnection conn_;
  bool ok_ = false;
  std::string last_reply_;
};

}  // namespace latch::test
