#pragma once
// A request template: space-separated arguments in which placeholders are replaced per
// request, encoded as a RESP multibulk ("*3\r\n$3\r\nSET\r\n...").
//   {r}  a random integer in [0, keyspace), 12 digits, zero padded (as redis-benchmark's
//        __rand_int__)
//   {i}  the request's sequence number, 12 digits, zero padded
//   {k}  the key of a cycle or handoff (given by the workload)
//   {o}  the client's owner token: 22 bytes, unique per client (a lock token's size)
// An argument may mix text and placeholders ("lock:{r}"). Arguments cannot hold spaces.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch::bench {

struct TemplateVars {
  std::uint64_t r = 0;
  std::uint64_t i = 0;
  std::string_view k;
  std::string_view o;
};

class CommandTemplate {
 public:
  explicit CommandTemplate(std::string_view text);
  // Appends the encoded request to *out.
  void AppendTo(const TemplateVars& vars, std::string* out) const;

 private:
  enum class Kind { kText, kR, kI, kK, kO };
  struct Piece {
    Kind kind;
    std::string text;
  };
  std::vector<std::vector<Piece>> args_;
};

// The 22-byte owner token of client number `client`.
std::string OwnerToken(int client);

}  // namespace latch::bench
