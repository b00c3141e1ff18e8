#include "store/zset_setop.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace latch::store {
namespace {

std::size_t SizeOf(const SetOpSource& s) { return s.z != nullptr ? s.z->size() : 0; }

void AggregateInto(double* target, double value, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;  // inf + -inf
      break;
    case Aggregate::kMin:
      *target = std::min(value, *target);
      break;
    case Aggregate::kMax:
      *target = std::max(value, *target);
      break;
  }
}

// weight * score, with NaN (0 * inf) counted as 0.
double Weighted(const SetOpSource& s, double score) {
  const double v = s.weight * score;
  return std::isnan(v) ? 0 : v;
}

void SortBySize(std::span<SetOpSource> sources) {
  std::stable_sort(sources.begin(), sources.end(), [](const SetOpSource& a, const SetOpSource& b) {
    return SizeOf(a) < SizeOf(b);
  });
}

// Walks the members of sources[0] present in every other source with their aggregated
// score: fn(member, score) returns false to stop.
template <class Fn>
void ForEachInAll(std::span<const SetOpSource> sources, Aggregate agg, Fn&& fn) {
  if (SizeOf(sources[0]) == 0) return;
  for (const auto* n = sources[0].z->First(); n != nullptr; n = n->next()) {
    double score = Weighted(sources[0], n->score());
    bool everywhere = true;
    for (std::size_t j = 1; j < sources.size() && everywhere; ++j) {
      const ZSetValue::Node* other =
          sources[j].z == sources[0].z ? n
                                       : (sources[j].z ? sources[j].z->Find(n->member()) : nullptr);
      if (other == nullptr) {
        everywhere = false;
      } else {
        AggregateInto(&score, sources[j].weight * other->score(), agg);
      }
    }
    if (everywhere && !fn(n->member(), score)) return;
  }
}

std::unique_ptr<ZSetValue> Union(std::span<const SetOpSource> sources, Aggregate agg) {
  std::unordered_map<std::string_view, double> acc;
  for (const SetOpSource& s : sources) {
    if (SizeOf(s) == 0) continue;
    for (const auto* n = s.z->First(); n != nullptr; n = n->next()) {
      const double score = Weighted(s, n->score());
      auto [it, fresh] = acc.try_emplace(n->member(), score);
      if (!fresh) AggregateInto(&it->second, score, agg);
    }
  }
  auto out = std::make_unique<ZSetValue>();
  for (const auto& [member, score] : acc) out->Insert(member, score);
  return out;
}

std::unique_ptr<ZSetValue> Diff(std::span<const SetOpSource> sources) {
  auto out = std::make_unique<ZSetValue>();
  if (SizeOf(sources[0]) == 0) return out;
  for (std::size_t j = 1; j < sources.size(); ++j) {
    if (sources[j].z == sources[0].z) return out;  // a set minus itself
  }
  for (const auto* n = sources[0].z->First(); n != nullptr; n = n->next()) {
    bool elsewhere = false;
    for (std::size_t j = 1; j < sources.size() && !elsewhere; ++j) {
      elsewhere = sources[j].z != nullptr && sources[j].z->Find(n->member()) != nullptr;
    }
    if (!elsewhere) out->Insert(n->member(), n->score());
  }
  return out;
}

}  // namespace

std::unique_ptr<ZSetValue> CombineZSets(std::span<SetOpSource> sources, SetOp op, Aggregate agg) {
  if (op == SetOp::kDiff) return Diff(sources);
  SortBySize(sources);
  if (op == SetOp::kUnion) return Union(sources, agg);
  auto out = std::make_unique<ZSetValue>();
  ForEachInAll(sources, agg, [&](std::string_view member, double score) {
    out->Insert(member, score);
    return true;
  });
  return out;
}

std::size_t CountIntersection(std::span<SetOpSource> sources, std::size_t limit) {
  SortBySize(sources);
  std::size_t count = 0;
  ForEachInAll(sources, Aggregate::kSum, [&](std::string_view, double) {
    ++count;
    return limit == 0 || count < limit;
  });
  return count;
}

void OpZStore(const KeyRef& k, std::unique_ptr<ZSetValue> value, const OpEnv& env) {
  Object* existing = k.shard->Find(k.key, k.hash, env.now.mono_ms);
  if (value->size() == 0) {
    if (existing != nullptr) k.shard->Erase(existing, k.hash);
    return;
  }
  k.shard->PutContainer(existing, k.key, k.hash, std::move(value), Expiry::Clear());
}

}  // namespace latch::store
