#pragma once
// Classic daemon behaviour, as redis-server: `daemonize yes` forks into the background and
// `pidfile` records the server's pid for init scripts and logrotate's postrotate.
#include <string>

namespace latch::service {

// Forks; the parent exits with status 0 at once (as redis-server's does), the child starts a
// new session and points stdin, stdout and stderr at /dev/null. Call before any thread exists.
void Daemonize();

// Writes the pid (decimal and a newline) to `path` and removes the file when destroyed, i.e.
// at a clean exit. A pid file that cannot be written is a warning, not a failure (Redis).
class PidFile {
 public:
  PidFile() = default;
  ~PidFile();
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

  // Returns an empty string on success, else the reason (strerror).
  std::string Write(const std::string& path);
  // Removes the file now (the destructor does it otherwise); for an exit that skips it.
  void Remove();

 private:
  std::string path_;
};

}  // namespace latch::service
