#include "net/read_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace latch {

ReadBuffer::~ReadBuffer() { std::free(data_); }

std::span<char> ReadBuffer::PrepareRead(std::size_t wanted) {
  if (start_ == end_) {
    start_ = end_ = 0;
    if (capacity_ > kShrinkAbove) Release();
  }
  // A big bulk in progress: read as much as is held already (the buffer doubles as the
  // bytes come), never more than the request still needs. A long request of many small
  // arguments (DEL of a million keys) doubles the same way: growing it one chunk per read
  // took 800 reads and remaps of a growing block for 13 MB. Otherwise one chunk.
  std::size_t room = kChunk;
  if (wanted > kChunk) {
    room = std::min(wanted, std::max(kChunk, size()));
  } else if (size() > kChunk) {
    room = size();
  }
  if (capacity_ - end_ < room && start_ > 0) {
    std::memmove(data_, data_ + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  if (capacity_ - end_ < room) Reallocate(end_ + room);
  return {data_ + end_, capacity_ - end_};
}

void ReadBuffer::Commit(std::size_t n) {
  end_ += n;
  peak_ = std::max(peak_, size());
}

// Offsets are not reset here: a read may be under way into the space after end_ (a parked
// client keeps reading); PrepareRead resets them.
void ReadBuffer::Release() {
  if (start_ != end_) return;
  std::free(data_);
  data_ = nullptr;
  capacity_ = start_ = end_ = 0;
}

void ReadBuffer::Reallocate(std::size_t capacity) {
  // realloc, not a vector: no zero fill, and a large block moves by remapping pages.
  void* p = std::realloc(data_, capacity);
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  capacity_ = capacity;
}

}  // namespace latch
