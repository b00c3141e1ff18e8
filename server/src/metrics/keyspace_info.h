#pragma once
// The databases' key counts as INFO and /metrics show them.
#include <string>

namespace latch::store {
class KeyspaceSet;
}  // namespace latch::store

namespace latch {

// INFO keyspace: one "dbN:keys=..,expires=..,avg_ttl=0" line per non-empty database.
void AppendKeyspaceInfo(store::KeyspaceSet& dbs, std::string* s);
// /metrics (Redis exporter names): redis_db_keys and redis_db_keys_expiring by db.
void AppendDbMetrics(store::KeyspaceSet& dbs, std::string* out);

}  // namespace latch
