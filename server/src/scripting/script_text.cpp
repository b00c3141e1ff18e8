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

bool NormalizeSha(std::string_view sha, ShaText* out) {
  if (sha.size() != out->size()) return false;
  for (std::size_t i = 0; i < sha.size(); ++i) {
    const char c = sha[i];
    (*out)[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return true;
}

}  // namespace latch::scripting
