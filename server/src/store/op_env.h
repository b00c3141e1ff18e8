#pragma once
// What every store operation (string_ops.h, key_ops.h, lock_ops.h) shares: the status it
// returns and the environment it runs in. An Op carries a write's whole meaning on one
// locked shard: it takes a KeyRef (hash computed once), parameters without command syntax,
// and returns a status; the Cmd layer turns that status into a reply. Ops never see a
// socket, an argument list or a reply writer.
#include <cstdint>

#include "latch/clock.h"
#include "store/key_ref.h"

namespace latch::store {

struct LockStats;

enum class OpStatus : std::uint8_t {
  kOk,          // done
  kNoKey,       // the key does not exist (nothing done)
  kNotMet,      // a condition (NX, XX, IFEQ, owner, GT...) was not met (nothing done)
  kBadDigest,   // an IFDEQ/IFDNE digest is not 16 hex digits (checked only on a live key)
  kNotInteger,  // the stored value is not an integer (INCR)
  kOverflow,    // the result would overflow int64 (INCR)
  kWrongType,   // the key holds another type (WRONGTYPE)
  kNotFloat,    // the stored value or the result is not a valid float (HINCRBYFLOAT, ZINCRBY)
};

struct OpEnv {
  TimeSnapshot now;                 // the command's time snapshot
  LockStats* lock_stats = nullptr;  // counts the lock idioms (SET NX PX, compare-and-delete)
  // lock-restart-delay is running: a conditional creation (SET NX) is answered as for a held
  // key (docs/LOCKS.md).
  bool grants_held = false;
};

}  // namespace latch::store
