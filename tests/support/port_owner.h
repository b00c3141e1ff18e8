#pragma once
// Whether a given process is the one listening on a loopback port. A test that starts a server
// on a port picked at run time and then waits for "something answers on that port" can be
// answered by another process that took the port first (another test's server, restarted on
// its own port in the moment between our pick and our bind): it then drives the wrong server.
// Launchers check the owner before they call a server ready.
#include <sys/types.h>

namespace latch::test {

// True when `pid` (any of its threads) holds a socket listening on TCP `port` (IPv4 or IPv6,
// any local address), read from /proc/net/tcp{,6} and /proc/PID/fd.
bool ListensOn(pid_t pid, int port);

}  // namespace latch::test
