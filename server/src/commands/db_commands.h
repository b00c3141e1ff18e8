#pragma once
// Database helpers shared with other commands and INFO / metrics (db_commands.cpp).
#include <string>
#include <string_view>

#include "server_state.h"

namespace latch {

// A database index as Redis reads one (an int): "" and *db set, or Redis's error for a
// non-integer or one outside int's range.
std::string_view ParseDbIndex(std::string_view arg, int* db);
// 0 <= db < databases.
bool DbInRange(const ServerState& server, int db);

// INFO keyspace: one "dbN:keys=..,expires=..,avg_ttl=0" line per non-empty database.
void AppendKeyspaceInfo(ServerState& server, std::string* s);
// /metrics (Redis exporter names): redis_db_keys and redis_db_keys_expiring by db.
void AppendDbMetrics(ServerState& server, std::string* out);

}  // namespace latch
