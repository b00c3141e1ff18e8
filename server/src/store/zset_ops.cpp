#include "store/zset_ops.h"

#include <cmath>
#include <memory>

#include "store/container_ops.h"

namespace latch::store {
namespace {

// One element of ZADD on a set that exists (or is being built): Redis's rules per flag.
void AddOne(ZSetValue& z, const ScoredMember& e, unsigned f, ZAddResult* r) {
  // A zero score is stored as +0: Redis prints a small set's -0 as "0".
  double score = e.score == 0 ? 0.0 : e.score;
  const ZSetValue::Node* n = z.Find(e.member);
  if (n == nullptr) {
    if (f & ZAddParams::kXx) return;
    z.Insert(e.member, score);
    ++r->added;
    // ZINCRBY / ZADD INCR of a new member answer the increment as parsed, before it is
    // stored: Redis replies "-0" to `ZINCRBY k -0 m` and then keeps 0.
    r->incr_done = true;
    r->incr_score = e.score;
    return;
  }
  if (f & ZAddParams::kNx) return;
  const double cur = n->score();
  if (f & ZAddParams::kIncr) score = score + cur == 0 ? 0.0 : score + cur;
  if (((f & ZAddParams::kLt) && score >= cur) || ((f & ZAddParams::kGt) && score <= cur)) {
    return;
  }
  if (score != cur) {
    z.Update(n, score);
    ++r->updated;
  }
  r->incr_done = true;
  r->incr_score = score;
}

}  // namespace

OpStatus OpZAdd(const KeyRef& k, std::span<const ScoredMember> elems, const ZAddParams& p,
                const OpEnv& env, ZAddResult* r) {
  Object* o;
  ZSetValue* z;
  if (OpStatus s = FindContainer(k, env, &o, &z); s != OpStatus::kOk) return s;
  if (p.flags & ZAddParams::kIncr) {
    // INCR takes one element: a NaN result (inf + -inf) is refused before any change.
    const ZSetValue::Node* n = z != nullptr ? z->Find(elems[0].member) : nullptr;
    if (n != nullptr && std::isnan(n->score() + elems[0].score)) return OpStatus::kNotFloat;
  }
  if (z == nullptr) {
    if (p.flags & ZAddParams::kXx) return OpStatus::kOk;
    auto fresh = std::make_unique<ZSetValue>();
    for (const ScoredMember& e : elems) AddOne(*fresh, e, p.flags, r);
    k.shard->PutContainer(nullptr, k.key, k.hash, std::move(fresh), Expiry::Clear());
    return OpStatus::kOk;
  }
  for (const ScoredMember& e : elems) AddOne(*z, e, p.flags, r);
  if (r->added + r->updated > 0) k.shard->Changed(o, k.hash);
  return OpStatus::kOk;
}

OpStatus OpZRem(const KeyRef& k, std::span<const std::string_view> members, const OpEnv& env,
                std::int64_t* removed) {
  Object* o;
  ZSetValue* z;
  *removed = 0;
  if (OpStatus s = FindContainer(k, env, &o, &z); s != OpStatus::kOk || z == nullptr) return s;
  for (std::string_view m : members) {
    if (const ZSetValue::Node* n = z->Find(m)) {
      z->Erase(n);
      ++*removed;
    }
  }
  if (*removed > 0) AfterChange(k, o, *z);
  return OpStatus::kOk;
}

bool ClampRankRange(std::int64_t size, std::int64_t* start, std::int64_t* stop) {
  if (*start < 0) *start += size;
  if (*stop < 0) *stop += size;
  if (*start < 0) *start = 0;
  if (*start > *stop || *start >= size) return false;
  if (*stop >= size) *stop = size - 1;
  return true;
}

OpStatus OpZRemRangeByRank(const KeyRef& k, std::int64_t start, std::int64_t stop,
                           const OpEnv& env, std::int64_t* removed) {
  Object* o;
  ZSetValue* z;
  *removed = 0;
  if (OpStatus s = FindContainer(k, env, &o, &z); s != OpStatus::kOk || z == nullptr) return s;
  if (!ClampRankRange(static_cast<std::int64_t>(z->size()), &start, &stop)) return OpStatus::kOk;
  const ZSetValue::Node* n = z->AtRank(static_cast<std::size_t>(start));
  for (std::int64_t i = start; i <= stop && n != nullptr; ++i) {
    const ZSetValue::Node* next = n->next();
    z->Erase(n);
    ++*removed;
    n = next;
  }
  AfterChange(k, o, *z);
  return OpStatus::kOk;
}

OpStatus OpZRemRangeByScore(const KeyRef& k, const ScoreRange& range, const OpEnv& env,
                            std::int64_t* removed) {
  Object* o;
  ZSetValue* z;
  *removed = 0;
  if (OpStatus s = FindContainer(k, env, &o, &z); s != OpStatus::kOk || z == nullptr) return s;
  const ZSetValue::Node* n = z->FirstIn(range);
  while (n != nullptr && range.BelowMax(n->score())) {
    const ZSetValue::Node* next = n->next();
    z->Erase(n);
    ++*removed;
    n = next;
  }
  if (*removed > 0) AfterChange(k, o, *z);
  return OpStatus::kOk;
}

OpStatus OpZPop(const KeyRef& k, std::int64_t count, bool max, const OpEnv& env,
                std::vector<std::pair<std::string, double>>* out) {
  Object* o;
  ZSetValue* z;
  if (OpStatus s = FindContainer(k, env, &o, &z); s != OpStatus::kOk || z == nullptr) return s;
  while (count-- > 0 && z->size() > 0) {
    const ZSetValue::Node* n = max ? z->Last() : z->First();
    out->emplace_back(std::string(n->member()), n->score());
    z->Erase(n);
  }
  if (!out->empty()) AfterChange(k, o, *z);
  return OpStatus::kOk;
}

}  // namespace latch::store
