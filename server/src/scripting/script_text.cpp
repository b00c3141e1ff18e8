#include "scripting/script_text.h"

namespace latch::scripting {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

}  // namespace

std::string CanonicalWhitespace(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  bool pending_space = false;
  for (char c : body) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

bool NormalizeSha(std::string_view sha, std::string* out) {
  if (sha.size() != 40) return false;
  out->assign(sha);
  for (char& c : *out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return true;
}

}  // namespace latch::scripting
