#include "journal/aof_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "latch/protocol/case_fold.h"

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

namespace {
constexpr std::size_t kManifestMaxLine = 1024;  // Redis's MANIFEST_MAX_LINE

// One manifest line ("file <name> seq <n> type <t>", keys in any order and case, more pairs
// allowed), checked as Redis 7.0's aofLoadManifestFromFile does; throws its error text.
AofFile ParseManifestLine(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) throw std::runtime_error("Invalid AOF manifest file format");
  if (words.size() < 6 || words.size() % 2 != 0) {
    throw std::runtime_error("Invalid AOF manifest file format");
  }
  AofFile f;
  f.type = 0;
  for (std::size_t i = 0; i < words.size(); i += 2) {
    const std::string& value = words[i + 1];
    if (EqualsNoCase(words[i], "file")) {
      if (value.find('/') != std::string::npos) {
        throw std::runtime_error("File can't be a path, just a filename");
      }
      f.name = value;
    } else if (EqualsNoCase(words[i], "seq")) {
      f.seq = std::atoll(value.c_str());
    } else if (EqualsNoCase(words[i], "type")) {
      f.type = value[0];
    }
  }
  if (f.name.empty() || f.seq == 0 || f.type == 0) {
    throw std::runtime_error("Invalid AOF manifest file format");
  }
  return f;
}
}  // namespace

// As Redis 7.0: a manifest with no line at all ("Found an empty AOF manifest"), a blank line or
// a last line without its newline refuse the start; a manifest of comments alone names no
// file, and the server starts without a journal to load, as Redis does.
std::optional<Manifest> ReadManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw SysError("Fatal error: can't open the AOF manifest file", path);
  }
  Manifest m;
  std::string line;
  int linenum = 0;
  try {
    while (std::getline(in, line)) {
      ++linenum;
      if (!line.empty() && line[0] == '#') continue;
      if (in.eof() || line.size() >= kManifestMaxLine) {  // no newline after it
        throw std::runtime_error("The AOF manifest file contains too long line");
      }
      const AofFile f = ParseManifestLine(line);
      if (f.type == 'b') {
        if (m.base) throw std::runtime_error("Found duplicate base file information");
        m.base = f;
      } else if (f.type == 'i') {
        if (!m.incrs.empty() && f.seq <= m.incrs.back().seq) {
          throw std::runtime_error("Found a non-monotonic sequence number");
        }
        m.incrs.push_back(f);
      } else if (f.type != 'h') {  // history files are not loaded, as by Redis
        throw std::runtime_error("Unknown AOF file type");
      }
    }
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (" + path + ", line " +
                             std::to_string(linenum) + ": '" + line.substr(0, 128) + "')");
  }
  if (in.bad()) throw SysError("Read AOF manifest failed", path);
  if (linenum == 0) throw std::runtime_error("Found an empty AOF manifest: " + path);
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
