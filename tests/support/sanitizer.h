#pragma once
// Whether this test binary (and so the latchd built beside it) runs under a sanitizer. Tests
// that measure RSS, CPU time or address-space limits skip themselves there: ASan's allocator
// keeps freed memory in quarantine, reserves terabytes of address space and slows the store
// 10-40x, so those numbers say nothing about latchd (the Debug and Release runs assert them).
namespace latch::test {

constexpr bool kUnderSanitizer =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

constexpr bool kUnderThreadSanitizer =
#if defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

}  // namespace latch::test

// Skips the current test under a sanitizer, saying why.
#define LATCH_SKIP_UNDER_SANITIZER(why)                             \
  do {                                                              \
    if (::latch::test::kUnderSanitizer) GTEST_SKIP() << (why);      \
  } while (0)

// Skips the current test under ThreadSanitizer only.
#define LATCH_SKIP_UNDER_TSAN(why)                                  \
  do {                                                              \
    if (::latch::test::kUnderThreadSanitizer) GTEST_SKIP() << (why); \
  } while (0)
