#pragma once
// The corpus format of the differential test (tests/wire/corpus/*.txt): one step per line.
//
//   # comment                  (blank lines are ignored too)
//   SET k "a b" PX 100         a command in redis-cli syntax ("..." with \n \r \t \xHH
//                              escapes, '...' literal), sent as a RESP multibulk request
//   ~TIME                      compare only the reply's type byte (values that legitimately
//                              differ: TIME, INFO, HELLO's version, client ids, PTTL)
//   ^KEYS *                    sort the elements of every flat aggregate before comparing
//                              (KEYS/SCAN order is unspecified)
//   > PING\r\n                 raw bytes (escapes \r \n \t \\ \" \0 \xHH, and \{N}c for the
//                              character c repeated N times), expecting one reply
//   >2 PING\r\nPING\r\n        raw bytes expecting 2 replies (>0: none)
//   !advance 50                let 50 ms pass: a real server sleeps, a ManualClock advances
//   !reconnect                 open fresh connections to both servers
//   !server requirepass pw     (before any step) start both servers with this setting
//
// After a protocol error reply or QUIT, both connections must be closed by the server (this
// is compared too), and the next step runs on fresh connections.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace latch::test {

struct CorpusStep {
  enum class Kind { kCommand, kRaw, kAdvance, kReconnect };
  enum class Compare { kBytes, kType, kSorted };
  Kind kind = Kind::kCommand;
  Compare compare = Compare::kBytes;
  int line = 0;
  std::string text;               // the line as written, for messages
  std::vector<std::string> args;  // kCommand
  std::string raw;                // kRaw: bytes to send
  int replies = 1;                // kRaw: replies to read
  std::int64_t advance_ms = 0;    // kAdvance
};

struct Corpus {
  std::vector<std::pair<std::string, std::string>> server_settings;  // !server lines
  std::vector<CorpusStep> steps;
};

// Splits a line like redis-cli does (sdssplitargs). False on unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* out);
// Decodes \r \n \t \\ \" \0 \xHH and \{N}c escapes. False on a bad escape.
bool Unescape(std::string_view text, std::string* out);
// Parses a corpus file's text; on a malformed line returns false and sets *error.
bool ParseCorpus(std::string_view text, Corpus* corpus, std::string* error);

// The reply with the elements of every aggregate made only of scalars sorted (bytes),
// recursively; replies that do not parse are returned unchanged.
std::string SortAggregates(std::string_view reply);
// Printable form of raw bytes for failure messages: \r\n shown as such, other control
// bytes as \xHH, long replies cut.
std::string Printable(std::string_view bytes);

}  // namespace latch::test
