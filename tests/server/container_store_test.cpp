// Hashes and sorted sets in the store: the skip list against a model (std::set of (score,
// member)) through random adds, score moves with forced ties, removals, ranks and ranges;
// the shard's ownership of containers (erase, overwrite, expiry, flush free them: ASan's
// leak check runs this executable); WRONGTYPE from the string Ops; the float texts.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/container_ops.h"
#include "store/float_text.h"
#include "store/hash_ops.h"
#include "store/key_move_ops.h"
#include "store/key_ops.h"
#include "store/keyspace.h"
#include "store/string_ops.h"
#include "store/zset_ops.h"

namespace latch::store {
namespace {

constexpr std::int64_t kT0 = 1'000'000;

using Model = std::set<std::pair<double, std::string>>;

void ExpectMatches(const ZSetValue& z, const Model& model, std::mt19937_64& rng) {
  ASSERT_EQ(z.size(), model.size());
  std::size_t rank = 0;
  const ZSetValue::Node* prev = nullptr;
  for (const auto& [score, member] : model) {
    const ZSetValue::Node* n = prev == nullptr ? z.First() : prev->next();
    ASSERT_NE(n, nullptr);
    ASSERT_EQ(n->score(), score);
    ASSERT_EQ(n->member(), member);
    ASSERT_EQ(n->prev(), prev);
    ASSERT_EQ(z.Find(member), n);
    if (rng() % 8 == 0) {
      ASSERT_EQ(z.RankOf(n), rank);
      ASSERT_EQ(z.AtRank(rank), n);
    }
    prev = n;
    ++rank;
  }
  ASSERT_EQ(z.Last(), prev);
}

TEST(ZSetValue, MatchesAModelWithForcedTies) {
  std::mt19937_64 rng(7);
  ZSetValue z;
  Model model;
  std::map<std::string, double> scores;
  for (int step = 0; step < 20000; ++step) {
    const std::string member = "m" + std::to_string(rng() % 300);
    // Few distinct scores: most comparisons are ties broken by the member.
    const double score = static_cast<double>(rng() % 7) - 3 + (rng() % 5 == 0 ? 0.5 : 0);
    const ZSetValue::Node* n = z.Find(member);
    const int op = static_cast<int>(rng() % 4);
    if (op <= 1) {
      if (n == nullptr) {
        z.Insert(member, score);
      } else {
        model.erase({n->score(), member});
        z.Update(n, score);
      }
      model.insert({score, member});
      scores[member] = score;
    } else if (op == 2 && n != nullptr) {
      model.erase({n->score(), member});
      z.Erase(n);
      scores.erase(member);
    } else if (!model.empty()) {
      // A score range checked against the model, both directions.
      ScoreRange r{static_cast<double>(rng() % 7) - 3, static_cast<double>(rng() % 7) - 3,
                   rng() % 2 == 0, rng() % 2 == 0};
      std::vector<std::string> want;
      for (const auto& [s, m] : model) {
        if (r.AboveMin(s) && r.BelowMax(s)) want.push_back(m);
      }
      std::vector<std::string> got;
      for (const auto* x = z.FirstIn(r); x != nullptr && r.BelowMax(x->score()); x = x->next()) {
        got.emplace_back(x->member());
      }
      ASSERT_EQ(got, want) << "step " << step;
      const auto* last = z.LastIn(r);
      ASSERT_EQ(last == nullptr, want.empty());
      if (last != nullptr) {
        ASSERT_EQ(last->member(), want.back());
      }
    }
    if (step % 97 == 0) ExpectMatches(z, model, rng);
  }
  ExpectMatches(z, model, rng);
  auto copy = z.Clone();
  ExpectMatches(*static_cast<ZSetValue*>(copy.get()), model, rng);
}

Object* Get(Shard& s, const std::string& key, std::int64_t now = kT0) {
  return s.Find(key, HashKey(key), now);
}

KeyRef Ref(Keyspace& ks, const std::string& key) {
  const std::uint64_t h = HashKey(key);
  return KeyRef{key, h, &ks.ShardFor(h)};
}

TEST(ContainerStore, ShardOwnsAndFreesContainers) {
  Keyspace ks(1, kT0);
  Shard& s = ks.shard(0);
  const OpEnv env{TimeSnapshot{kT0, kT0, 0}};
  std::int64_t n = 0;
  const std::string_view pairs[] = {"f", "v"};
  ASSERT_EQ(OpHSet(Ref(ks, "h"), pairs, false, env, &n), OpStatus::kOk);
  const ScoredMember elems[] = {{1, "a"}, {2, "b"}};
  ZAddResult r;
  ASSERT_EQ(OpZAdd(Ref(ks, "z"), elems, ZAddParams{}, env, &r), OpStatus::kOk);
  EXPECT_EQ(r.added, 2);
  EXPECT_EQ(Get(s, "h")->type(), ObjectType::kHash);
  EXPECT_EQ(Get(s, "z")->type(), ObjectType::kZSet);
  // WRONGTYPE both ways; SET overwrites (and frees) a hash.
  std::int64_t out = 0;
  EXPECT_EQ(OpIncrBy(Ref(ks, "h"), 1, env, &out), OpStatus::kWrongType);
  EXPECT_EQ(OpZAdd(Ref(ks, "h"), elems, ZAddParams{}, env, &r), OpStatus::kWrongType);
  EXPECT_EQ(OpSet(Ref(ks, "h"), "plain", SetParams{}, env, nullptr), OpStatus::kOk);
  EXPECT_EQ(Get(s, "h")->type(), ObjectType::kString);
  EXPECT_EQ(Get(s, "h")->value(), "plain");
  EXPECT_EQ(OpHSet(Ref(ks, "h"), pairs, false, env, &n), OpStatus::kWrongType);
  // RENAME moves the container; COPY clones it.
  ASSERT_EQ(OpRename(Ref(ks, "z"), Ref(ks, "z2"), false, env), OpStatus::kOk);
  EXPECT_EQ(Get(s, "z"), nullptr);
  ASSERT_EQ(OpCopy(Ref(ks, "z2"), Ref(ks, "z3"), false, env), OpStatus::kOk);
  ZAddResult r2;
  const ScoredMember more[] = {{3, "c"}};
  ASSERT_EQ(OpZAdd(Ref(ks, "z3"), more, ZAddParams{}, env, &r2), OpStatus::kOk);
  EXPECT_EQ(static_cast<ZSetValue*>(Get(s, "z2")->container())->size(), 2u);
  EXPECT_EQ(static_cast<ZSetValue*>(Get(s, "z3")->container())->size(), 3u);
  // Emptied: the key goes.
  std::int64_t removed = 0;
  const std::string_view members[] = {"a", "b"};
  ASSERT_EQ(OpZRem(Ref(ks, "z2"), members, env, &removed), OpStatus::kOk);
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(Get(s, "z2"), nullptr);
  // Expiry frees a container too, and Clear frees the rest (ASan checks the leaks).
  ASSERT_EQ(OpHSet(Ref(ks, "h2"), pairs, false, env, &n), OpStatus::kOk);
  ASSERT_EQ(OpExpire(Ref(ks, "h2"), ExpireParams{.deadline_ms = kT0 + 10}, env), OpStatus::kOk);
  EXPECT_EQ(s.ExpireDue(kT0 + 20, 100), 1u);
  EXPECT_EQ(Get(s, "h2", kT0 + 20), nullptr);
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
}

TEST(ContainerStore, HashKeepsInsertionOrderWhileSmall) {
  HashValue h;
  EXPECT_TRUE(h.Set("b", "1"));
  EXPECT_TRUE(h.Set("a", "2"));
  EXPECT_FALSE(h.Set("b", "3"));
  std::vector<std::string> order;
  h.ForEach([&](std::string_view f, std::string_view v) { order.push_back(std::string(f) + "=" + std::string(v)); });
  EXPECT_EQ(order, (std::vector<std::string>{"b=3", "a=2"}));
  EXPECT_TRUE(h.small());
  EXPECT_TRUE(h.Set("long", std::string(65, 'x')));
  EXPECT_FALSE(h.small());
  std::string_view v;
  EXPECT_TRUE(h.Get("b", &v));
  EXPECT_EQ(v, "3");
  EXPECT_TRUE(h.Erase("b"));
  EXPECT_FALSE(h.Has("b"));
  EXPECT_EQ(h.size(), 2u);
}

TEST(ContainerStore, HashMatchesAModelAcrossItsConversion) {
  std::mt19937_64 rng(3);
  HashValue h;
  std::map<std::string, std::string> model;
  for (int step = 0; step < 5000; ++step) {
    const std::string f = "f" + std::to_string(rng() % 200);
    if (rng() % 3 == 0) {
      ASSERT_EQ(h.Erase(f), model.erase(f) == 1);
    } else {
      const std::string v(rng() % 70, static_cast<char>('a' + rng() % 26));
      ASSERT_EQ(h.Set(f, v), model.count(f) == 0);
      model[f] = v;
    }
    ASSERT_EQ(h.size(), model.size());
  }
  std::map<std::string, std::string> seen;
  h.ForEach([&](std::string_view f, std::string_view v) { seen[std::string(f)] = v; });
  EXPECT_EQ(seen, model);
  auto copy = h.Clone();
  seen.clear();
  static_cast<HashValue*>(copy.get())->ForEach(
      [&](std::string_view f, std::string_view v) { seen[std::string(f)] = v; });
  EXPECT_EQ(seen, model);
}

TEST(FloatText, ParsesAndPrintsAsRedis) {
  double d = 0;
  EXPECT_TRUE(ParseDouble("1.5", &d));
  EXPECT_TRUE(ParseDouble("inf", &d) && std::isinf(d));
  EXPECT_TRUE(ParseDouble("-inf", &d) && d < 0);
  EXPECT_FALSE(ParseDouble("nan", &d));
  EXPECT_FALSE(ParseDouble(" 1", &d));
  EXPECT_FALSE(ParseDouble("1x", &d));
  EXPECT_FALSE(ParseDouble("", &d));
  EXPECT_FALSE(ParseDouble("1e400", &d));
  bool ex = false;
  EXPECT_TRUE(ParseRangeEnd("(1.5", &d, &ex) && ex && d == 1.5);
  EXPECT_TRUE(ParseRangeEnd("-inf", &d, &ex) && !ex);
  EXPECT_FALSE(ParseRangeEnd("(x", &d, &ex));
  EXPECT_EQ(FormatDouble(1.1), "1.1000000000000001");
  EXPECT_EQ(FormatDouble(3), "3");
  EXPECT_EQ(FormatDouble(-INFINITY), "-inf");
  EXPECT_EQ(FormatLongDouble(12.6L), "12.6");
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  EXPECT_EQ(FormatLongDouble(100), "100");
}

}  // namespace
}  // namespace latch::store
