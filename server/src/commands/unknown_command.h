#pragma once
// Redis's reply to a command it does not know (the dispatcher's, and SENTINEL's on a single
// node, which is no sentinel).
#include <span>
#include <string>
#include <string_view>

namespace latch {

// "ERR unknown command 'x', with args beginning with: 'a' 'b' ", each argument quoted up to
// a total of 128 characters, as Redis.
std::string UnknownCommandError(std::span<const std::string_view> args);

}  // namespace latch
