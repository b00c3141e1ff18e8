#pragma once
// The service manager side of latchd's start-up: `supervised` (Redis's directive) and the
// sd_notify protocol, spoken directly: one datagram of "KEY=value\n" lines to the Unix socket
// named by $NOTIFY_SOCKET (a path, or '@' for an abstract name), so there is no libsystemd
// dependency. With Type=notify, systemd considers latchd started on READY=1 and shows STATUS
// in `systemctl status`; STOPPING=1 says the shutdown has begun.
#include <string>
#include <string_view>

namespace latch::service {

enum class Supervision { kNone, kSystemd, kUpstart };

// Redis's rules: "systemd"/"upstart" as asked; "auto" picks systemd when $NOTIFY_SOCKET is set,
// else upstart when $UPSTART_JOB is set, else none; "no" is none.
Supervision ResolveSupervision(std::string_view mode);

class SystemdNotifier {
 public:
  // Reads $NOTIFY_SOCKET; with none set, every call is a no-op that returns false.
  SystemdNotifier();
  explicit SystemdNotifier(std::string socket_path) : path_(std::move(socket_path)) {}

  bool enabled() const { return !path_.empty(); }
  const std::string& socket_path() const { return path_; }
  // Sends `state` (e.g. "READY=1\nSTATUS=Ready to accept connections\n") as one datagram.
  // Returns false (errno set) when it could not be sent.
  bool Notify(std::string_view state) const;

 private:
  std::string path_;
};

}  // namespace latch::service
