#include "config/log_file_sink.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace latch::config {

LogFileSink::LogFileSink(std::string path) : path_(std::move(path)) {
  if (!Open()) {
    throw std::runtime_error(std::string("Can't open the log file: ") + std::strerror(errno));
  }
}

LogFileSink::~LogFileSink() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LogFileSink::Open() {
  std::FILE* file = std::fopen(path_.c_str(), "a");
  if (file == nullptr) return false;
  struct stat st {};
  if (::fstat(::fileno(file), &st) == 0) {
    device_ = st.st_dev;
    inode_ = st.st_ino;
  }
  if (file_ != nullptr) std::fclose(file_);
  file_ = file;
  return true;
}

bool LogFileSink::PathStillNamesOpenFile() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return false;
  return st.st_dev == device_ && st.st_ino == inode_;
}

void LogFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (reopen_requested_.exchange(false, std::memory_order_relaxed) || !PathStillNamesOpenFile()) {
    // When the new file cannot be created (e.g. the directory is gone), keep writing to the
    // old one: a line in a moved file is better than a lost line.
    Open();
  }
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  std::fwrite(formatted.data(), 1, formatted.size(), file_);
  std::fflush(file_);
}

void LogFileSink::flush_() { std::fflush(file_); }

}  // namespace latch::config
