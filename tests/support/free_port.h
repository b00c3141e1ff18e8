#pragma once
// Picks a TCP port on 127.0.0.1 that is free right now, for servers started by tests.

namespace latch::test {

// Binds 127.0.0.1:0, reads the port the kernel chose and closes the socket. Another process
// may take the port before the caller binds it: process launchers retry with a new port.
// Returns 0 if no socket could be bound (the caller's start-up then fails visibly).
int FreePort();

}  // namespace latch::test
