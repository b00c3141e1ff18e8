#pragma once
// Database helpers shared with other commands (db_commands.cpp).
#include <string>
#include <string_view>

#include "server_state.h"

namespace latch {

// A database index as Redis reads one (an int): "" and *db set, or Redis's error for a
// non-integer or one outside int's range.
std::string_view ParseDbIndex(std::string_view arg, int* db);
// 0 <= db < databases.
bool DbInRange(const ServerState& server, int db);

}  // namespace latch
