#pragma once
// The bytes a connection has read and not yet consumed (Redis's query buffer).
//
// Memory is taken as bytes arrive, never ahead of them and never zero-filled: a request
// that declares a 512 MB bulk and sends two bytes costs one read chunk, and the buffer
// doubles only while the bulk's bytes keep coming (each read may fill at most as much as
// the buffer already holds). A buffer that grew for a big request is given back once it has
// been consumed, so an idle connection holds one chunk, mostly untouched by the kernel.
//
// Owner: one Connection, on its worker thread. Pointers from data() stay valid until the
// next PrepareRead() (which may move the bytes); the request parser keeps offsets.
#include <cstddef>
#include <span>

namespace latch {

class ReadBuffer {
 public:
  static constexpr std::size_t kChunk = 16 * 1024;        // Redis's PROTO_IOBUF_LEN
  static constexpr std::size_t kShrinkAbove = 64 * 1024;  // kept while empty up to this

  ReadBuffer() = default;
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  const char* data() const { return data_ + start_; }
  std::size_t size() const { return end_ - start_; }  // unconsumed bytes (qbuf)
  std::size_t capacity() const { return capacity_; }
  std::size_t free_space() const { return capacity_ - end_; }  // qbuf-free
  std::size_t peak() const { return peak_; }

  // Room for the next read. `wanted`: bytes the request in progress still needs at least
  // (0 if unknown). Throws std::bad_alloc when memory cannot be had.
  std::span<char> PrepareRead(std::size_t wanted);
  // `n` bytes were read into the span PrepareRead returned.
  void Commit(std::size_t n);
  // The first `n` unconsumed bytes were used.
  void Consume(std::size_t n) { start_ += n; }  // inline: once per request
  // Frees the memory of an empty buffer (the next PrepareRead takes a fresh chunk).
  void Release();

 private:
  void Reallocate(std::size_t capacity);

  char* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t start_ = 0, end_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace latch
