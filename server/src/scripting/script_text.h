#pragma once
// Text helpers of the script cache and the native-script recogniser.
#include <array>
#include <string>
#include <string_view>

namespace latch::scripting {

// Collapses every run of whitespace (space, tab, CR, LF, VT, FF) to one space and trims both
// ends: two bodies that differ only in indentation or line breaks get the same text.
std::string CanonicalWhitespace(std::string_view body);

// A SHA as EVALSHA / SCRIPT EXISTS take it: any case, lowercased. Returns false (and leaves
// *out alone) when `sha` is not 40 characters long; such a SHA never matches a script.
using ShaText = std::array<char, 40>;
bool NormalizeSha(std::string_view sha, ShaText* out);
inline std::string_view ShaView(const ShaText& sha) { return {sha.data(), sha.size()}; }

}  // namespace latch::scripting
