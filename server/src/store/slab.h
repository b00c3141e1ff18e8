#pragma once
// A shard's block allocator: objects live in 4 KiB pages carved from 1 MiB mappings, one
// size class (a multiple of 8 bytes) per page, and are named by 32-bit handles instead of
// 64-bit pointers. Why: a lock is ~60 bytes of key, token and header; malloc adds 8-16
// bytes to each block and the hash set and timer links need a pointer each. With handles a
// hash-set bucket is 8 bytes (was 16) and a timer link 4 (was 8); the block has no header.
//
// Handle = page index (23 bits) << 9 | offset in the page in 8-byte units (9 bits). Page
// indices below kFirstPage are never handed out: handles below kFirstHandle are free for the
// timer wheel's list heads (timer_wheel.h). Handle 0 is never valid.
//
// Every page starts with its own index (8 bytes), so a block's handle is recovered from its
// address alone (HandleOf). Blocks larger than kMaxSmall get a page-table entry of their own
// that points at a page-aligned heap block with the same 8-byte prefix.
//
// A page whose blocks are all freed returns to a pool shared by all size classes. Trim(),
// called on the shard's periodic tick, gives the memory of pages that stayed in the pool for
// a whole second (beyond a warm reserve) back to the kernel (MADV_DONTNEED), a bounded batch
// per call: a mass expiry shrinks the RSS, while a burst of releases followed by new locks
// (the usual churn) reuses warm pages instead of paying a syscall and a page fault for each
// (measured: madvise at release time cut release throughput by a third). Clear() unmaps
// everything at once (FLUSHALL).
//
// Not thread-safe: one slab per shard, used under the shard's lock. Bytes() is global.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace latch::store {

class Slab {
 public:
  static constexpr std::size_t kPageSize = 4096;
  static constexpr int kUnitShift = 3;  // 8-byte units
  static constexpr int kOffsetBits = 9;  // 512 units per page
  static constexpr std::uint32_t kFirstPage = 2;
  static constexpr std::uint32_t kFirstHandle = kFirstPage << kOffsetBits;
  static constexpr std::uint32_t kMaxPages = std::uint32_t{1} << (32 - kOffsetBits);
  static constexpr std::size_t kMaxSmall = 1024;  // larger blocks come from the heap
  static constexpr std::size_t kChunkPages = 256;  // 1 MiB per mapping

  Slab();
  ~Slab();
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  // A block of at least `bytes` (8-byte aligned). *handle receives its handle, *capacity its
  // usable size. Throws std::bad_alloc when the page table or the system is out of room.
  void* Allocate(std::size_t bytes, std::uint32_t* handle, std::size_t* capacity);
  void Free(std::uint32_t handle);
  // Frees every block and unmaps every page.
  void Clear();

  void* Get(std::uint32_t handle) const {
    return pages_[handle >> kOffsetBits] +
           (static_cast<std::size_t>(handle & ((1u << kOffsetBits) - 1)) << kUnitShift);
  }
  static std::uint32_t HandleOf(const void* block) {
    const auto addr = reinterpret_cast<std::uintptr_t>(block);
    const auto page = addr & ~static_cast<std::uintptr_t>(kPageSize - 1);
    return (*reinterpret_cast<const std::uint32_t*>(page) << kOffsetBits) |
           static_cast<std::uint32_t>((addr - page) >> kUnitShift);
  }
  // Usable bytes of the block (what Allocate reported).
  std::size_t Capacity(std::uint32_t handle) const;

  // Returns idle pages' memory to the kernel (see above). now_ms: a monotonic clock.
  void Trim(std::int64_t now_ms);

  // Pages in use by this slab (partly or fully), for tests.
  std::size_t pages_in_use() const { return pages_in_use_; }
  // Empty pages whose memory is resident (warm), and those given back to the kernel.
  std::size_t warm_free_pages() const { return dirty_.size(); }
  std::size_t returned_pages() const { return clean_.size(); }

  static constexpr std::size_t kWarmPages = 64;     // empty pages always kept resident
  static constexpr std::int64_t kIdleMs = 1000;     // unused this long before returned
  static constexpr std::size_t kTrimBatch = 256;    // pages returned per Trim call at most
  // Bytes of pages in use by all slabs of the process (INFO used_memory adds the heap, which
  // holds the large blocks).
  static std::size_t Bytes() { return total_bytes_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::uint8_t kFreePage = 0;
  static constexpr std::uint8_t kLargeBlock = 255;
  static constexpr std::uint16_t kPageUnits = kPageSize >> kUnitShift;
  static constexpr int kClasses = kMaxSmall >> kUnitShift;  // class c: c units (1..128)

  struct PageMeta {
    std::uint32_t next = 0;       // partial list of its class (page index), 0 = end
    std::uint32_t prev = 0;
    std::uint16_t free_head = 0;  // first freed slot (offset in units), 0 = none
    std::uint16_t bump = 0;       // first never-used offset
    std::uint16_t live = 0;
    std::uint8_t cls = kFreePage;
    bool in_partial = false;
  };

  std::uint32_t NewPage(std::uint8_t cls);
  void ReleasePage(std::uint32_t page);
  void PushPartial(std::uint32_t page);
  void RemovePartial(std::uint32_t page);
  bool Full(const PageMeta& m) const { return m.free_head == 0 && m.bump + m.cls > kPageUnits; }
  std::uint32_t NewIndex();
  void AddBytes(std::ptrdiff_t delta);

  std::vector<char*> pages_;     // base address per page index
  std::vector<PageMeta> meta_;
  std::uint32_t partial_[kClasses + 1] = {};  // per class: first page with a free slot
  // Empty pages (any class may take one): resident ones, oldest first, and those whose
  // memory went back to the kernel. NewPage prefers the newest resident page.
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> clean_;
  std::int64_t window_start_ = -1;  // Trim's current one-second window
  std::size_t min_dirty_ = 0;       // fewest resident empty pages seen in that window
  std::size_t to_return_ = 0;       // pages found idle for a whole window, not yet returned
  std::vector<std::uint32_t> free_indices_;  // page-table entries without memory
  std::vector<char*> chunks_;                 // mappings, for Clear()
  char* carve_ = nullptr;                     // unused pages of the newest mapping
  std::size_t carve_left_ = 0;
  std::size_t pages_in_use_ = 0;
  std::size_t bytes_ = 0;  // this slab's share of total_bytes_

  static std::atomic<std::size_t> total_bytes_;
};

}  // namespace latch::store
