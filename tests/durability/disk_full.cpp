#include "durability/disk_full.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace latch::test {
namespace {
namespace fs = std::filesystem;

std::string Filler(const LatchdChild& child) { return child.aof_dir() + "/filler"; }

// The largest file in the journal's directory: the incremental file being appended to.
std::uint64_t LargestJournalFile(const LatchdChild& child) {
  std::uint64_t largest = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(child.aof_dir(), ec)) {
    largest = std::max<std::uint64_t>(largest, f.file_size(ec));
  }
  return largest;
}
}  // namespace

JournalDiskFull::JournalDiskFull(LatchdChild& child) : child_(child) {
  std::error_code ec;
  fs::create_directories(child.aof_dir(), ec);
  // LATCH_DISK_FULL_NO_MOUNT=1 runs the fallback where mount would work (to test it).
  if (std::getenv("LATCH_DISK_FULL_NO_MOUNT") != nullptr) {
    why_ = "LATCH_DISK_FULL_NO_MOUNT: using RLIMIT_FSIZE";
  } else if (::mount("tmpfs", child.aof_dir().c_str(), "tmpfs", 0, "size=4m,mode=0755") == 0) {
    mounted_ = true;
  } else {
    why_ = std::string("mount: ") + std::strerror(errno) + " (using RLIMIT_FSIZE instead)";
  }
}

JournalDiskFull::~JournalDiskFull() {
  if (mounted_) ::umount2(child_.aof_dir().c_str(), MNT_DETACH);
}

bool JournalDiskFull::Fill() {
  if (!mounted_) {
    if (child_.pid() <= 0) return why_ = "no child to limit", false;
    const auto size = static_cast<rlim_t>(LargestJournalFile(child_));
    const rlimit limit{size, RLIM_INFINITY};
    if (::prlimit(child_.pid(), RLIMIT_FSIZE, &limit, nullptr) != 0) {
      return why_ = std::string("prlimit: ") + std::strerror(errno), false;
    }
    limited_ = true;
    return true;
  }
  // Whole pages of zeros until the tmpfs refuses one: it is then full to the page.
  const int fd = ::open(Filler(child_).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return why_ = std::string("filler: ") + std::strerror(errno), false;
  const std::vector<char> page(4096, 0);
  for (int i = 0; i < 4096; ++i) {  // at most 16 MB: more than the 4 MB tmpfs holds
    if (::write(fd, page.data(), page.size()) != static_cast<ssize_t>(page.size())) break;
  }
  ::close(fd);
  return true;
}

bool JournalDiskFull::Free() {
  if (!mounted_) {
    if (!limited_ || child_.pid() <= 0) return true;  // a restarted child has no limit
    const rlimit limit{RLIM_INFINITY, RLIM_INFINITY};
    limited_ = false;
    return ::prlimit(child_.pid(), RLIMIT_FSIZE, &limit, nullptr) == 0;
  }
  return ::unlink(Filler(child_).c_str()) == 0;
}

std::string JournalDiskFull::Error() const { return std::strerror(mounted_ ? ENOSPC : EFBIG); }

}  // namespace latch::test
