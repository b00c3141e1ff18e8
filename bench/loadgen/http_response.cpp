#include "http_response.h"

#include <charconv>
#include <optional>

namespace latch::bench {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] | 0x20, y = b[i] | 0x20;  // ASCII letters only: header names are
    if (x != y) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseSize(std::string_view s, int base, std::size_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// A chunked body starting at in[pos]: appends its data to *body and returns the offset just
// after its last chunk's CRLF, 0 when incomplete, -1 when malformed. Trailers are refused
// (the service sends none).
std::ptrdiff_t ReadChunked(std::string_view in, std::size_t pos, std::string* body) {
  body->clear();
  for (int chunks = 0; chunks < 1'000'000; ++chunks) {
    const std::size_t eol = in.find("\r\n", pos);
    if (eol == std::string_view::npos) return 0;
    std::string_view size_text = in.substr(pos, eol - pos);
    size_text = size_text.substr(0, size_text.find(';'));
    std::size_t size = 0;
    if (!ParseSize(Trim(size_text), 16, &size)) return -1;
    const std::size_t data = eol + 2;
    if (in.size() < data + size + 2) return 0;
    if (in.substr(data + size, 2) != "\r\n") return -1;
    if (size == 0) return static_cast<std::ptrdiff_t>(data + 2);
    body->append(in.substr(data, size));
    pos = data + size + 2;
  }
  return -1;
}

}  // namespace

std::ptrdiff_t ParseHttpResponse(std::string_view in, HttpResponse* out) {
  const std::size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    return in.size() > 64 * 1024 ? -1 : 0;  // a head this long is not the service's
  }
  const std::string_view head = in.substr(0, head_end);
  std::size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  // "HTTP/1.1 200 OK": the version, then a 3-digit status.
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    return -1;
  }
  std::size_t status = 0;
  if (!ParseSize(status_line.substr(9, 3), 10, &status)) return -1;
  out->status = static_cast<int>(status);
  out->close = status_line.substr(0, 8) == "HTTP/1.0";
  std::optional<std::size_t> length;
  bool chunked = false;
  while (eol != std::string_view::npos) {
    const std::size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, eol == std::string_view::npos ? std::string_view::npos : eol - start);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return -1;
    const std::string_view name = line.substr(0, colon), value = Trim(line.substr(colon + 1));
    if (IEquals(name, "content-length")) {
      std::size_t n = 0;
      if (!ParseSize(value, 10, &n)) return -1;
      length = n;
    } else if (IEquals(name, "transfer-encoding")) {
      chunked = IEquals(value, "chunked");
      if (!chunked) return -1;
    } else if (IEquals(name, "connection")) {
      if (IEquals(value, "close")) out->close = true;
      if (IEquals(value, "keep-alive")) out->close = false;
    }
  }
  const std::size_t body_start = head_end + 4;
  if (chunked) return ReadChunked(in, body_start, &out->body);
  // 1xx, 204 and 304 have no body; anything else must say how long it is (a body up to the
  // connection's end would need a close to finish: not what a keep-alive service sends).
  if (!length) {
    if (status < 200 || status == 204 || status == 304)
      length = 0;
    else
      return -1;
  }
  if (in.size() < body_start + *length) return 0;
  out->body.assign(in.substr(body_start, *length));
  return static_cast<std::ptrdiff_t>(body_start + *length);
}

}  // namespace latch::bench
