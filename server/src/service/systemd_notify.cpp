#include "service/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace latch::service {

Supervision ResolveSupervision(std::string_view mode) {
  if (mode == "systemd") return Supervision::kSystemd;
  if (mode == "upstart") return Supervision::kUpstart;
  if (mode != "auto") return Supervision::kNone;
  if (std::getenv("NOTIFY_SOCKET") != nullptr) return Supervision::kSystemd;
  if (std::getenv("UPSTART_JOB") != nullptr) return Supervision::kUpstart;
  return Supervision::kNone;
}

SystemdNotifier::SystemdNotifier() {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path != nullptr) path_ = path;
}

bool SystemdNotifier::Notify(std::string_view state) const {
  if (path_.empty()) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.size() >= sizeof(address.sun_path) || (path_[0] != '/' && path_[0] != '@')) {
    errno = EINVAL;
    return false;
  }
  std::memcpy(address.sun_path, path_.data(), path_.size());
  // An abstract socket's name starts with a NUL byte; systemd writes it as '@'.
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&address), length);
  const int error = errno;
  ::close(fd);
  errno = error;
  return sent == static_cast<ssize_t>(state.size());
}

}  // namespace latch::service
