#pragma once
// A sorted set's value: a skip list ordered by (score, member) whose links carry spans, so a
// member's rank and the member at a rank are found in O(log n), plus an open-addressing set
// of the nodes keyed by member for O(1) ZSCORE and duplicate checks. Each member lives once,
// inside its node (one allocation per member: score, back link, levels, member bytes); the
// index holds only node pointers.
//
// Small sets stay small (a semaphore holds a handful of members): the head grows its levels
// as the list needs them (not 32 up front), and the member index is built only past
// kIndexFrom members (a lookup below that walks the list).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <tsl/robin_set.h>

#include "store/object.h"

namespace latch::store {

// A score interval: [min, max] with either end exclusive (ZRANGEBYSCORE's "(" syntax).
struct ScoreRange {
  double min = 0, max = 0;
  bool min_ex = false, max_ex = false;
  bool AboveMin(double v) const { return min_ex ? v > min : v >= min; }
  bool BelowMax(double v) const { return max_ex ? v < max : v <= max; }
  bool Empty() const { return min > max || (min == max && (min_ex || max_ex)); }
};

class ZSetValue final : public Container {
 public:
  static constexpr int kMaxLevel = 32;
  static constexpr std::size_t kIndexFrom = 16;

  class Node {
   public:
    double score() const { return score_; }
    std::string_view member() const {
      return {reinterpret_cast<const char*>(levels_ + level_), len_};
    }
    Node* next() const { return levels_[0].forward; }
    Node* prev() const { return backward_; }

   private:
    friend class ZSetValue;
    struct Level {
      Node* forward;
      std::size_t span;  // nodes skipped by this link, the target included
    };
    double score_;
    Node* backward_;
    std::uint32_t len_;
    std::uint8_t level_;
    Level levels_[1];  // level_ of them (the head: kMaxLevel), then the member bytes
  };

  ZSetValue();
  ~ZSetValue() override;
  ZSetValue(const ZSetValue&) = delete;
  ZSetValue& operator=(const ZSetValue&) = delete;

  static constexpr ObjectType kType = ObjectType::kZSet;
  ObjectType type() const override { return kType; }
  std::unique_ptr<Container> Clone() const override;
  std::size_t size() const { return length_; }

  // The member's node, or nullptr.
  const Node* Find(std::string_view member) const;
  // Adds a member that is not present (Find() returned nullptr).
  void Insert(std::string_view member, double score);
  // Moves a present member to a new score.
  void Update(const Node* node, double score);
  // Removes a present member.
  void Erase(const Node* node);

  // 0-based rank of a present member in ascending order.
  std::size_t RankOf(const Node* node) const;
  // The node at a 0-based ascending rank (< size()).
  const Node* AtRank(std::size_t rank) const;
  const Node* First() const { return head_->levels_[0].forward; }
  const Node* Last() const { return tail_; }
  // The lowest / highest node whose score is in range, or nullptr.
  const Node* FirstIn(const ScoreRange& r) const;
  const Node* LastIn(const ScoreRange& r) const;

 private:
  struct MemberHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view m) const;
    std::size_t operator()(const Node* n) const { return (*this)(n->member()); }
  };
  struct MemberEq {
    using is_transparent = void;
    static std::string_view M(std::string_view m) { return m; }
    static std::string_view M(const Node* n) { return n->member(); }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const { return M(a) == M(b); }
  };

  static Node* NewNode(int level, double score, std::string_view member);
  static void FreeNode(Node* n);
  static bool Before(const Node* n, double score, std::string_view member) {
    return n->score_ < score || (n->score_ == score && n->member() < member);
  }
  // Fills update[i] with the last node at level i before (score, member), and rank[i] with
  // its 1-based rank (the head: 0).
  void Path(double score, std::string_view member, Node** update, std::size_t* rank) const;
  void Link(Node* n);  // inserts n by its score and member
  void GrowHead(int level);
  void Unlink(Node* n);
  bool InRange(const ScoreRange& r) const;

  Node* head_;
  Node* tail_ = nullptr;
  std::size_t length_ = 0;
  int level_ = 1;
  int head_cap_;        // levels the head node has room for
  bool indexed_ = false;  // index_ holds every node (size() passed kIndexFrom once)
  tsl::robin_set<Node*, MemberHash, MemberEq> index_;
};

}  // namespace latch::store
