#pragma once
// RENAME/RENAMENX and COPY: a value of any type moved or copied to another key with its TTL.
// Both keys' shards are held by the caller (the dispatcher locks them in index order). The keys
// may be in two databases (MOVE, COPY ... DB): each KeyRef's shard says which.
//
// Key events: RENAME writes the destination (kWritten, one event whatever was there: a lock
// waiter on the destination is not handed the key in between) and then erases the source
// (kDeleted: a waiter on the source may be granted it). A key granted by LOCK.ACQUIRE moves
// with its value; a new destination carries the source's fencing token.
#include "store/op_env.h"
#include "store/shard.h"

namespace latch::store {

// kOk, kNoKey (no source), kNotMet (nx and the destination exists).
OpStatus OpRename(const KeyRef& src, const KeyRef& dst, bool nx, const OpEnv& env);
// kOk, kNoKey (no source), kNotMet (the destination exists and not replace).
OpStatus OpCopy(const KeyRef& src, const KeyRef& dst, bool replace, const OpEnv& env);

}  // namespace latch::store
