#include "journal/base_writer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "journal/container_records.h"
#include "journal/record_codec.h"

namespace latch::journal {
namespace {

constexpr std::size_t kFlushAbove = 1 << 20;

// Calls fn for every item, in an order that strides through `items` by about 0.618 of its
// size (a step coprime with it, so every item once). Why: a shard iterates its keys in the
// order of their slots, which is the order of their hashes, and the loader inserts a base's
// keys, in file order, into the shard's open-addressing table (store/handle_table.h) while it
// grows. Keys arriving in hash order pile up into one ever longer run of occupied slots (each
// insert probes to its end): 742k locks took 22.5 s to load. Scattered, the same keys land
// evenly over the table, as keys arriving from clients do.
template <class Fn>
void ForEachScattered(const std::vector<const store::Object*>& items, Fn&& fn) {
  const std::size_t n = items.size();
  if (n == 0) return;
  std::size_t step = std::max<std::size_t>(1, n * 618 / 1000);
  while (std::gcd(step, n) != 1) ++step;
  std::size_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    fn(items[at]);
    at += step;
    if (at >= n) at -= n;
  }
}

// One shard's live keys, under the caller's hold of it.
void WriteShard(store::Shard& shard, const Clock& clock, const BaseWriter& w,
                std::vector<const store::Object*>& objects, std::string* out) {
  const TimeSnapshot now = clock.Now();
  objects.clear();
  shard.ForEach([&](const store::Object* o) { objects.push_back(o); });
  ForEachScattered(objects, [&](const store::Object* o) {
    if (o->expired(now.mono_ms)) return;
    const std::int64_t deadline = o->has_expire() ? w.deadline(*o, now) : 0;
    if (o->is_container()) {
      EncodeContainer(out, *o, deadline);
    } else if (o->token() != 0) {
      EncodeLock(out, o->key(), o->value(), o->token(), deadline);
    } else {
      EncodeSet(out, o->key(), o->value(), deadline);
    }
  });
}

}  // namespace

std::uint64_t WriteBase(const std::vector<std::pair<int, store::Keyspace*>>& dbs,
                        std::uint64_t fence, const Clock& clock, const BaseWriter& w) {
  std::string out;
  std::uint64_t total = 0;
  std::vector<const store::Object*> objects;
  // Every token granted before the first shard was read is at most this: the counter
  // survives the keys.
  EncodeFence(&out, fence);
  int selected = 0;  // a base starts in database 0, as every journal file
  for (const auto& [db, ks] : dbs) {
    if (db != selected) EncodeSelect(&out, db);
    selected = db;
    for (int i = 0; i < ks->shard_count(); ++i) {
      store::Shard& shard = ks->shard(i);
      if (!w.lock(shard)) throw std::runtime_error("aborted");
      struct Unlock {
        const BaseWriter& w;
        store::Shard& s;
        ~Unlock() { w.unlock(s); }
      } unlock{w, shard};
      WriteShard(shard, clock, w, objects, &out);
      if (out.size() >= kFlushAbove) {
        w.flush(out);
        total += out.size();
        out.clear();
      }
    }
  }
  w.flush(out);
  return total + out.size();
}

}  // namespace latch::journal
