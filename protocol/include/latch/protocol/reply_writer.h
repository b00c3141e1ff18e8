#pragma once
// Encodes replies in RESP2 or RESP3 by appending to a caller-owned string. Types that
// RESP2 lacks are mapped the way Redis maps them: null -> $-1 (or *-1 for arrays),
// map -> flat array of 2n elements, set -> array, double -> bulk string, boolean -> 1/0.
#include <cstdint>
#include <string>
#include <string_view>

namespace latch::protocol {

class ReplyWriter {
 public:
  ReplyWriter(std::string* out, int proto) : out_(out), proto_(proto) {}

  int proto() const { return proto_; }
  void set_proto(int proto) { proto_ = proto; }
  std::string* buffer() { return out_; }

  void Simple(std::string_view s);   // +s
  void Error(std::string_view s);    // -s  (s: "ERR ...", "WRONGTYPE ...", ...)
  void Ok() { Raw("+OK\r\n"); }
  void Integer(std::int64_t v);
  void Bulk(std::string_view s);
  void Null();                       // missing value: $-1 | _
  void NullArray();                  // missing array: *-1 | _
  void ArrayHeader(std::size_t n);
  void MapHeader(std::size_t pairs); // %n | *2n
  void SetHeader(std::size_t n);     // ~n | *n
  void Double(double v);             // ,v | $len v  (Redis's %.17g and inf/-inf/nan)
  void Bool(bool v);                 // #t/#f | :1/:0
  void Verbatim(std::string_view s); // =len txt:s | $len s
  void Raw(std::string_view bytes) { out_->append(bytes); }

 private:
  void Header(char type, std::int64_t n);
  std::string* out_;
  int proto_;
};

}  // namespace latch::protocol
