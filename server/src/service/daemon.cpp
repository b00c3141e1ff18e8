#include "service/daemon.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace latch::service {

void Daemonize() {
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid > 0) std::_Exit(0);  // the parent: nothing of the server's runs in it
  ::setsid();
  const int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    if (null > STDERR_FILENO) ::close(null);
  }
}

PidFile::~PidFile() { Remove(); }

void PidFile::Remove() {
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
}

std::string PidFile::Write(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return std::strerror(errno);
  std::fprintf(file, "%ld\n", static_cast<long>(::getpid()));
  if (std::fclose(file) != 0) return std::strerror(errno);
  path_ = path;
  return {};
}

}  // namespace latch::service
