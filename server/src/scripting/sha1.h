#pragma once
// SHA-1 (FIPS 180-4) of a script body: the script cache's key, as 40 lowercase hex digits
// exactly like Redis's sha1hex().
#include <string>
#include <string_view>

namespace latch::scripting {

std::string Sha1Hex(std::string_view data);

}  // namespace latch::scripting
