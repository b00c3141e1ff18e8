#include "store/slab.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LATCH_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define LATCH_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define LATCH_POISON(p, n) ((void)(p), (void)(n))
#define LATCH_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace latch::store {

std::atomic<std::size_t> Slab::total_bytes_{0};

namespace {

constexpr std::size_t kHeader = 8;  // the page index at the start of every page and large block

void WriteHeader(char* page, std::uint32_t index) {
  std::memset(page, 0, kHeader);
  std::memcpy(page, &index, sizeof(index));
}

// reserve() with geometric growth (reserve(n) alone would reallocate on every call).
template <class V>
void ReserveFor(V& v, std::size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

// The free list threads through freed slots: the first two bytes hold the next offset.
std::uint16_t NextFree(const char* slot) {
  std::uint16_t next;
  std::memcpy(&next, slot, sizeof(next));
  return next;
}

}  // namespace

Slab::Slab() : pages_(kFirstPage, nullptr), meta_(kFirstPage) {}

Slab::~Slab() { Clear(); }

void Slab::AddBytes(std::ptrdiff_t delta) {
  bytes_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(bytes_) + delta);
  if (delta >= 0) {
    total_bytes_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed);
  } else {
    total_bytes_.fetch_sub(static_cast<std::size_t>(-delta), std::memory_order_relaxed);
  }
}

std::uint32_t Slab::NewIndex() {
  if (!free_indices_.empty()) {
    const std::uint32_t i = free_indices_.back();
    free_indices_.pop_back();
    return i;
  }
  if (pages_.size() >= kMaxPages) throw std::bad_alloc();
  ReserveFor(meta_, pages_.size() + 1);  // both grow or neither does
  pages_.push_back(nullptr);
  meta_.emplace_back();
  return static_cast<std::uint32_t>(pages_.size() - 1);
}

std::uint32_t Slab::NewPage(std::uint8_t cls) {
  std::uint32_t page;
  if (!dirty_.empty()) {
    page = dirty_.back();
    dirty_.pop_back();
    min_dirty_ = std::min(min_dirty_, dirty_.size());
  } else if (!clean_.empty()) {
    page = clean_.back();
    clean_.pop_back();
  } else {
    if (carve_left_ == 0) {
      void* m = mmap(nullptr, kChunkPages * kPageSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) throw std::bad_alloc();
      try {
        chunks_.push_back(static_cast<char*>(m));
      } catch (...) {
        munmap(m, kChunkPages * kPageSize);
        throw;
      }
      carve_ = static_cast<char*>(m);
      carve_left_ = kChunkPages;
      LATCH_POISON(carve_, kChunkPages * kPageSize);
    }
    page = NewIndex();
    pages_[page] = carve_;
    carve_ += kPageSize;
    --carve_left_;
  }
  char* base = pages_[page];
  LATCH_UNPOISON(base, kHeader);
  WriteHeader(base, page);
  meta_[page] = PageMeta{};
  meta_[page].cls = cls;
  meta_[page].bump = kHeader >> kUnitShift;
  ++pages_in_use_;
  AddBytes(static_cast<std::ptrdiff_t>(kPageSize));
  // Room for this page in the pool now, so that freeing its last block never allocates.
  ReserveFor(dirty_, pages_in_use_ + dirty_.size());
  return page;
}

void Slab::ReleasePage(std::uint32_t page) {
  RemovePartial(page);
  meta_[page].cls = kFreePage;
  --pages_in_use_;
  AddBytes(-static_cast<std::ptrdiff_t>(kPageSize));
  LATCH_POISON(pages_[page], kPageSize);
  dirty_.push_back(page);
}

void Slab::Trim(std::int64_t now_ms) {
  if (window_start_ < 0 || now_ms - window_start_ >= kIdleMs) {
    // Pages that were never taken during the whole window: at least min_dirty_ of them.
    if (window_start_ >= 0) to_return_ = min_dirty_ > kWarmPages ? min_dirty_ - kWarmPages : 0;
    window_start_ = now_ms;
    min_dirty_ = dirty_.size();
  }
  const std::size_t spare = dirty_.size() > kWarmPages ? dirty_.size() - kWarmPages : 0;
  const std::size_t n = std::min({to_return_, kTrimBatch, spare});
  if (n == 0) return;
  // The oldest pages, in address order, so that neighbours go in one call. A page stays
  // mapped (its index keeps its address); the kernel hands back a zero page on next touch.
  std::vector<std::uint32_t> batch(dirty_.begin(), dirty_.begin() + static_cast<std::ptrdiff_t>(n));
  dirty_.erase(dirty_.begin(), dirty_.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(batch.begin(), batch.end(),
            [this](std::uint32_t a, std::uint32_t b) { return pages_[a] < pages_[b]; });
  std::size_t i = 0;
  while (i < batch.size()) {
    std::size_t j = i + 1;
    while (j < batch.size() && pages_[batch[j]] == pages_[batch[j - 1]] + kPageSize) ++j;
    madvise(pages_[batch[i]], (j - i) * kPageSize, MADV_DONTNEED);
    i = j;
  }
  clean_.insert(clean_.end(), batch.begin(), batch.end());
  to_return_ -= n;
  // The pages left idle since the window began are n fewer (pages released since then sit
  // behind them and must not be counted as idle).
  min_dirty_ = std::min(min_dirty_ > n ? min_dirty_ - n : 0, dirty_.size());
}

void Slab::PushPartial(std::uint32_t page) {
  PageMeta& m = meta_[page];
  m.prev = 0;
  m.next = partial_[m.cls];
  if (m.next != 0) meta_[m.next].prev = page;
  partial_[m.cls] = page;
  m.in_partial = true;
}

void Slab::RemovePartial(std::uint32_t page) {
  PageMeta& m = meta_[page];
  if (!m.in_partial) return;
  if (m.prev != 0) {
    meta_[m.prev].next = m.next;
  } else {
    partial_[m.cls] = m.next;
  }
  if (m.next != 0) meta_[m.next].prev = m.prev;
  m.next = m.prev = 0;
  m.in_partial = false;
}

void* Slab::Allocate(std::size_t bytes, std::uint32_t* handle, std::size_t* capacity) {
  if (bytes > kMaxSmall) {
    const std::uint32_t index = NewIndex();
    void* mem = nullptr;
    if (posix_memalign(&mem, kPageSize, kHeader + bytes) != 0) {
      free_indices_.push_back(index);
      throw std::bad_alloc();
    }
    char* block = static_cast<char*>(mem);
    WriteHeader(block, index);
    pages_[index] = block;
    meta_[index] = PageMeta{};
    meta_[index].cls = kLargeBlock;
    // Not added to Bytes(): the heap's own count (HeapBytes) already holds this block.
    const std::size_t usable = malloc_usable_size(block);
    *handle = (index << kOffsetBits) | (kHeader >> kUnitShift);
    *capacity = usable - kHeader;
    return block + kHeader;
  }
  const auto cls = static_cast<std::uint8_t>(bytes == 0 ? 1 : (bytes + 7) >> kUnitShift);
  std::uint32_t page = partial_[cls];
  if (page == 0) {
    page = NewPage(cls);
    PushPartial(page);
  }
  PageMeta& m = meta_[page];
  std::uint16_t offset;
  char* base = pages_[page];
  if (m.free_head != 0) {
    offset = m.free_head;
    m.free_head = NextFree(base + (static_cast<std::size_t>(offset) << kUnitShift));
  } else {
    offset = m.bump;
    m.bump = static_cast<std::uint16_t>(m.bump + cls);
  }
  ++m.live;
  if (Full(m)) RemovePartial(page);
  char* slot = base + (static_cast<std::size_t>(offset) << kUnitShift);
  const std::size_t size = static_cast<std::size_t>(cls) << kUnitShift;
  LATCH_UNPOISON(slot, size);
  *handle = (page << kOffsetBits) | offset;
  *capacity = size;
  return slot;
}

void Slab::Free(std::uint32_t handle) {
  const std::uint32_t page = handle >> kOffsetBits;
  PageMeta& m = meta_[page];
  if (m.cls == kLargeBlock) {
    char* block = pages_[page];
    std::free(block);
    pages_[page] = nullptr;
    m = PageMeta{};
    free_indices_.push_back(page);
    return;
  }
  const bool was_full = Full(m);
  const auto offset = static_cast<std::uint16_t>(handle & ((1u << kOffsetBits) - 1));
  char* slot = pages_[page] + (static_cast<std::size_t>(offset) << kUnitShift);
  std::memcpy(slot, &m.free_head, sizeof(m.free_head));
  // The free-list link stays readable; the rest of the slot is off limits until reused.
  LATCH_POISON(slot + 8, (static_cast<std::size_t>(m.cls) << kUnitShift) - 8);
  m.free_head = offset;
  --m.live;
  if (m.live == 0) {
    ReleasePage(page);
  } else if (was_full) {
    PushPartial(page);
  }
}

std::size_t Slab::Capacity(std::uint32_t handle) const {
  const std::uint32_t page = handle >> kOffsetBits;
  const PageMeta& m = meta_[page];
  if (m.cls == kLargeBlock) return malloc_usable_size(pages_[page]) - kHeader;
  return static_cast<std::size_t>(m.cls) << kUnitShift;
}

void Slab::Clear() {
  for (std::size_t i = kFirstPage; i < pages_.size(); ++i) {
    if (meta_[i].cls == kLargeBlock) std::free(pages_[i]);
  }
  for (char* c : chunks_) {
    LATCH_UNPOISON(c, kChunkPages * kPageSize);  // a later mapping may reuse the addresses
    munmap(c, kChunkPages * kPageSize);
  }
  AddBytes(-static_cast<std::ptrdiff_t>(bytes_));
  chunks_.clear();
  pages_.assign(kFirstPage, nullptr);
  pages_.shrink_to_fit();
  meta_.assign(kFirstPage, PageMeta{});
  meta_.shrink_to_fit();
  dirty_ = {};
  clean_ = {};
  to_return_ = 0;
  min_dirty_ = 0;
  free_indices_ = {};
  for (auto& p : partial_) p = 0;
  carve_ = nullptr;
  carve_left_ = 0;
  pages_in_use_ = 0;
}

}  // namespace latch::store
