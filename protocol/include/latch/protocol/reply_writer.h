#pragma once
// Encodes replies in RESP2 or RESP3 by appending to a caller-owned string. Types that
// RESP2 lacks are mapped the way Redis maps them: null -> $-1 (or *-1 for arrays),
// map -> flat array of 2n elements, set -> array, double -> bulk string, boolean -> 1/0.
#include <cstdint>
#include <string>
#include <string_view>

namespace latch::protocol {

// Told of each error reply as it is written (the server counts them for INFO errorstats).
// Called on the writer's thread; must not write to the writer.
class ErrorObserver {
 public:
  virtual void OnErrorReply(std::string_view text) = 0;

 protected:
  ~ErrorObserver() = default;
};

class ReplyWriter {
 public:
  // `errors` (may be null) must outlive the writer.
  ReplyWriter(std::string* out, int proto, ErrorObserver* errors = nullptr)
      : out_(out), proto_(proto), errors_(errors) {}

  int proto() const { return proto_; }
  void set_proto(int proto) { proto_ = proto; }
  std::string* buffer() { return out_; }
  ErrorObserver* error_observer() const { return errors_; }
  void set_error_observer(ErrorObserver* errors) { errors_ = errors; }

  void Simple(std::string_view s);   // +s
  // -s  (s: "ERR ...", "WRONGTYPE ...", ...); the observer is told.
  void Error(std::string_view s) {
    if (errors_ != nullptr) errors_->OnErrorReply(s);
    ErrorAlreadyCounted(s);
  }
  // -s for an error the observer was told of where it arose (a script passing on the error
  // of a redis.call, which Redis counts once).
  void ErrorAlreadyCounted(std::string_view s);
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
  ErrorObserver* errors_;
};

}  // namespace latch::protocol
