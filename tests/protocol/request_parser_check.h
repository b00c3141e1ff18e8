#pragma once
// Table rows for parser tests and the check that runs one row fed whole and in pieces.
#include <cstddef>
#include <string>
#include <vector>

#include "latch/protocol/request_parser.h"
#include "protocol/request_parser_harness.h"

namespace latch::protocol::testing {

// One table row: the input and everything the parser must report for it.
struct Case {
  std::string name;
  std::string input;
  std::vector<Event> events;
  std::size_t leftover = 0;
  std::size_t bytes_wanted = 0;
  ParserLimits limits = {};
  // false only where Redis itself answers differently depending on how the bytes were
  // split into reads (a line end arriving after more than kInlineMaxSize bytes).
  bool split_invariant = true;
};

// Checks the case fed whole, then (when split_invariant) split in two at every offset
// (a sample of offsets, including
// those around kInlineMaxSize, for inputs over 2 KiB) and one byte at a time.
void CheckCase(const Case& c);

}  // namespace latch::protocol::testing
