#pragma once
// What the in-process journal tests share (journal_writer_test.cpp, journal_pass_test.cpp):
// a logger without a sink (the journals' warnings go nowhere) and a temporary journal file.
#include <spdlog/logger.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace latch::journal::test {

inline spdlog::logger& JournalTestLog() {
  static spdlog::logger log("journal-test");
  return log;
}

struct JournalTestFile {
  JournalTestFile() {
    char p[] = "/tmp/latch-journal-XXXXXX";
    fd = ::mkstemp(p);
    path = p;
  }
  ~JournalTestFile() { ::unlink(path.c_str()); }
  JournalTestFile(const JournalTestFile&) = delete;
  JournalTestFile& operator=(const JournalTestFile&) = delete;
  std::string Read() const {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  int fd;
  std::string path;
};

}  // namespace latch::journal::test
