#include "journal/aof_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace latch::journal {
namespace {

std::runtime_error SysError(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string Manifest::Text() const {
  std::string s;
  auto line = [&](const AofFile& f) {
    s += "file " + f.name + " seq " + std::to_string(f.seq) + " type " + f.type + "\n";
  };
  if (base) line(*base);
  for (const AofFile& f : incrs) line(f);
  return s;
}

std::string AofPaths::BaseName(std::int64_t seq) const {
  return prefix + "." + std::to_string(seq) + ".base.aof";
}

std::string AofPaths::IncrName(std::int64_t seq) const {
  return prefix + "." + std::to_string(seq) + ".incr.aof";
}

std::optional<Manifest> ReadManifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw SysError("Fail to open AOF manifest", path);
  }
  Manifest m;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key, value;
    AofFile f;
    bool has_type = false;
    while (words >> key >> value) {
      if (key == "file") {
        f.name = value;
      } else if (key == "seq") {
        f.seq = std::stoll(value);
      } else if (key == "type" && value.size() == 1) {
        f.type = value[0];
        has_type = true;
      }
    }
    if (f.name.empty() || !has_type || f.name.find('/') != std::string::npos) {
      throw std::runtime_error("Invalid AOF manifest file format: " + path);
    }
    if (f.type == 'b') {
      if (m.base) throw std::runtime_error("Found duplicate base file information: " + path);
      m.base = f;
    } else if (f.type == 'i') {
      if (!m.incrs.empty() && f.seq <= m.incrs.back().seq) {
        throw std::runtime_error("Found a non-monotonic sequence number: " + path);
      }
      m.incrs.push_back(f);
    }  // 'h' (history) files are ignored, as by Redis's loader
  }
  return m;
}

void WriteManifest(const AofPaths& paths, const Manifest& m) {
  const std::string tmp = paths.Manifest() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw SysError("Can't open the AOF manifest file", tmp);
  const std::string text = m.Text();
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw SysError("Error writing the AOF manifest file", tmp);
  if (::rename(tmp.c_str(), paths.Manifest().c_str()) != 0) {
    throw SysError("Error trying to rename the AOF manifest file", tmp);
  }
  SyncDirectory(paths.dir);
}

void EnsureDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw SysError("Can't create the append-only directory", dir);
  }
}

int OpenForAppend(const std::string& path, std::uint64_t* size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw SysError("Can't open the append-only file", path);
  struct stat st {};
  *size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return fd;
}

void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::string ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SysError("Fail to open AOF file", path);
  std::string data(FileSize(path), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

}  // namespace latch::journal
