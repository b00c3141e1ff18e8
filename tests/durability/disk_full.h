#pragma once
// A full disk under a latchd child's journal, made for real where the machine allows it: a
// small tmpfs mounted on the journal's directory and filled by a filler file, so that the
// journal's write() fails with ENOSPC as on a full disk (needs root with mount rights: CI and
// the dev machines run as root). Where mount(2) is refused (an unprivileged container), the
// child's RLIMIT_FSIZE is lowered to its journal file's size instead (prlimit), so that its
// write() fails with EFBIG; latchd_child.cpp has the child ignore SIGXFSZ for that.
// LATCH_DISK_FULL_NO_MOUNT=1 in the environment takes that way even where mount works.
#include <sys/types.h>

#include <string>

#include "durability/latchd_child.h"

namespace latch::test {

class JournalDiskFull {
 public:
  // Before the child's first Start(): mounts a 4 MB tmpfs on child.aof_dir() when it can.
  explicit JournalDiskFull(LatchdChild& child);
  ~JournalDiskFull();  // unmounts (lazily: a killed child may still hold a file open)
  JournalDiskFull(const JournalDiskFull&) = delete;
  JournalDiskFull& operator=(const JournalDiskFull&) = delete;

  bool mounted() const { return mounted_; }
  // From now on every append to the journal fails. False (with why()) when it could not.
  bool Fill();
  // The space is back (or the limit lifted): appends work again.
  bool Free();
  // strerror of what the journal's write() fails with while full.
  std::string Error() const;
  const std::string& why() const { return why_; }

 private:
  LatchdChild& child_;
  bool mounted_ = false;
  bool limited_ = false;
  std::string why_;
};

}  // namespace latch::test
