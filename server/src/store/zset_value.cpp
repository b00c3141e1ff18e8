#include "store/zset_value.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "store/shard.h"

namespace latch::store {
namespace {

// Level of a new node: 1, then each further level with probability 1/4 (the expected links
// per node are 4/3). A per-thread xorshift: levels need no quality beyond independence.
int RandomLevel() {
  thread_local std::uint64_t state = 0x9E3779B97F4A7C15ull ^ reinterpret_cast<std::uintptr_t>(&state);
  int level = 1;
  for (;;) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    if ((state & 3) != 0 || level >= ZSetValue::kMaxLevel) return level;
    ++level;
  }
}

}  // namespace

std::size_t ZSetValue::MemberHash::operator()(std::string_view m) const {
  return static_cast<std::size_t>(HashKey(m));
}

ZSetValue::Node* ZSetValue::NewNode(int level, double score, std::string_view member) {
  const std::size_t bytes =
      offsetof(Node, levels_) + sizeof(Node::Level) * static_cast<std::size_t>(level) + member.size();
  void* mem = std::malloc(bytes);
  if (mem == nullptr) throw std::bad_alloc();
  Node* n = static_cast<Node*>(mem);
  n->score_ = score;
  n->backward_ = nullptr;
  n->len_ = static_cast<std::uint32_t>(member.size());
  n->level_ = static_cast<std::uint8_t>(level);
  for (int i = 0; i < level; ++i) n->levels_[i] = {nullptr, 0};
  if (!member.empty()) std::memcpy(n->levels_ + level, member.data(), member.size());
  return n;
}

void ZSetValue::FreeNode(Node* n) { std::free(n); }

ZSetValue::ZSetValue() : head_(NewNode(4, 0, {})), head_cap_(4) {}

// The head is the only node nothing points back to (a first node's back link is null), so
// it can move.
void ZSetValue::GrowHead(int level) {
  int cap = head_cap_;
  while (cap < level) cap *= 2;
  Node* bigger = NewNode(cap, 0, {});
  for (int i = 0; i < head_cap_; ++i) bigger->levels_[i] = head_->levels_[i];
  FreeNode(head_);
  head_ = bigger;
  head_cap_ = cap;
}

ZSetValue::~ZSetValue() {
  Node* n = head_;
  while (n != nullptr) {
    Node* next = n->levels_[0].forward;
    FreeNode(n);
    n = next;
  }
}

std::unique_ptr<Container> ZSetValue::Clone() const {
  auto copy = std::make_unique<ZSetValue>();
  for (const Node* n = First(); n != nullptr; n = n->next()) copy->Insert(n->member(), n->score());
  return copy;
}

const ZSetValue::Node* ZSetValue::Find(std::string_view member) const {
  if (!indexed_) {
    for (const Node* n = First(); n != nullptr; n = n->next()) {
      if (n->member() == member) return n;
    }
    return nullptr;
  }
  auto it = index_.find(member);
  return it == index_.end() ? nullptr : *it;
}

void ZSetValue::Path(double score, std::string_view member, Node** update,
                     std::size_t* rank) const {
  Node* x = head_;
  for (int i = level_ - 1; i >= 0; --i) {
    rank[i] = i == level_ - 1 ? 0 : rank[i + 1];
    while (x->levels_[i].forward != nullptr && Before(x->levels_[i].forward, score, member)) {
      rank[i] += x->levels_[i].span;
      x = x->levels_[i].forward;
    }
    update[i] = x;
  }
}

void ZSetValue::Link(Node* n) {
  if (n->level_ > head_cap_) GrowHead(n->level_);  // before Path() takes the head's address
  Node* update[kMaxLevel];
  std::size_t rank[kMaxLevel];
  Path(n->score_, n->member(), update, rank);
  const int level = n->level_;
  if (level > level_) {
    for (int i = level_; i < level; ++i) {
      rank[i] = 0;
      update[i] = head_;
      head_->levels_[i].span = length_;
    }
    level_ = level;
  }
  for (int i = 0; i < level; ++i) {
    n->levels_[i].forward = update[i]->levels_[i].forward;
    update[i]->levels_[i].forward = n;
    n->levels_[i].span = update[i]->levels_[i].span - (rank[0] - rank[i]);
    update[i]->levels_[i].span = rank[0] - rank[i] + 1;
  }
  for (int i = level; i < level_; ++i) ++update[i]->levels_[i].span;
  n->backward_ = update[0] == head_ ? nullptr : update[0];
  if (n->levels_[0].forward != nullptr) {
    n->levels_[0].forward->backward_ = n;
  } else {
    tail_ = n;
  }
  ++length_;
}

void ZSetValue::Unlink(Node* n) {
  Node* update[kMaxLevel];
  std::size_t rank[kMaxLevel];
  Path(n->score_, n->member(), update, rank);
  for (int i = 0; i < level_; ++i) {
    if (update[i]->levels_[i].forward == n) {
      update[i]->levels_[i].span += n->levels_[i].span - 1;
      update[i]->levels_[i].forward = n->levels_[i].forward;
    } else {
      --update[i]->levels_[i].span;
    }
  }
  if (n->levels_[0].forward != nullptr) {
    n->levels_[0].forward->backward_ = n->backward_;
  } else {
    tail_ = n->backward_;
  }
  while (level_ > 1 && head_->levels_[level_ - 1].forward == nullptr) --level_;
  --length_;
}

void ZSetValue::Insert(std::string_view member, double score) {
  Node* n = NewNode(RandomLevel(), score, member);
  Link(n);
  if (indexed_) {
    index_.insert(n);
  } else if (length_ > kIndexFrom) {
    index_.reserve(length_ * 2);
    for (Node* x = head_->levels_[0].forward; x != nullptr; x = x->levels_[0].forward) {
      index_.insert(x);
    }
    indexed_ = true;
  }
}

void ZSetValue::Update(const Node* node, double score) {
  Node* n = const_cast<Node*>(node);
  // Still between its neighbours: the order is unchanged, only the score moves.
  if ((n->backward_ == nullptr || n->backward_->score_ < score) &&
      (n->levels_[0].forward == nullptr || n->levels_[0].forward->score_ > score)) {
    n->score_ = score;
    return;
  }
  Unlink(n);
  n->score_ = score;
  Link(n);
}

void ZSetValue::Erase(const Node* node) {
  Node* n = const_cast<Node*>(node);
  if (indexed_) index_.erase(n->member());
  Unlink(n);
  FreeNode(n);
}

std::size_t ZSetValue::RankOf(const Node* node) const {
  std::size_t rank = 0;
  const Node* x = head_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->levels_[i].forward != nullptr &&
           (x->levels_[i].forward == node ||
            Before(x->levels_[i].forward, node->score_, node->member()))) {
      rank += x->levels_[i].span;
      x = x->levels_[i].forward;
    }
    if (x == node) return rank - 1;
  }
  return rank - 1;
}

const ZSetValue::Node* ZSetValue::AtRank(std::size_t rank) const {
  const std::size_t target = rank + 1;
  std::size_t traversed = 0;
  const Node* x = head_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->levels_[i].forward != nullptr && traversed + x->levels_[i].span <= target) {
      traversed += x->levels_[i].span;
      x = x->levels_[i].forward;
    }
    if (traversed == target) return x;
  }
  return nullptr;
}

bool ZSetValue::InRange(const ScoreRange& r) const {
  if (r.Empty() || tail_ == nullptr) return false;
  return r.AboveMin(tail_->score_) && r.BelowMax(head_->levels_[0].forward->score_);
}

const ZSetValue::Node* ZSetValue::FirstIn(const ScoreRange& r) const {
  if (!InRange(r)) return nullptr;
  const Node* x = head_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->levels_[i].forward != nullptr && !r.AboveMin(x->levels_[i].forward->score_)) {
      x = x->levels_[i].forward;
    }
  }
  x = x->levels_[0].forward;
  return x != nullptr && r.BelowMax(x->score_) ? x : nullptr;
}

const ZSetValue::Node* ZSetValue::LastIn(const ScoreRange& r) const {
  if (!InRange(r)) return nullptr;
  const Node* x = head_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->levels_[i].forward != nullptr && r.BelowMax(x->levels_[i].forward->score_)) {
      x = x->levels_[i].forward;
    }
  }
  return x != head_ && r.AboveMin(x->score_) ? x : nullptr;
}

}  // namespace latch::store
