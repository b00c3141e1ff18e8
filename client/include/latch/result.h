#pragma once
// Errors of the client as values: every call returns Result<T>, either a T or an Error.
// A server's error reply (-ERR ...) is not an Error of Client::command: it is a Reply of type
// kError, because it is what the server said. Error covers what the transport or the lock
// layer could not do.
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace latch {

enum class Errc {
  kTimeout = 1,      // no reply within the call's timeout (the connection is then closed)
  kConnectionLost,   // the connection broke with the call in flight: outcome unknown
  kConnectFailed,    // could not connect (refused, unreachable, DNS)
  kHandshakeFailed,  // HELLO / AUTH / SELECT refused; message holds the server's text
  kProtocolError,    // the server sent bytes that are not RESP; the connection was closed
  kClientClosed,     // the Client was shut down
  kInvalidArgument,  // bad URL, bad TTL, ...
  kUnexpectedReply,  // a reply of a type the operation cannot interpret
  kServerError,      // the server answered an operation with an error reply
  kUnsupported,      // the server has neither LOCK.* nor scripting
  kNotAcquired,      // the lock is held by someone else (after waiting, if asked to)
  kLeaseLost,        // an auto-renewed lease expired or was taken over
};

const std::error_category& client_category();
inline std::error_code make_error_code(Errc e) { return {static_cast<int>(e), client_category()}; }

struct Error {
  std::error_code code;
  std::string message;  // details: the server's error text, the protocol error, ...

  // "<category message>: <details>"
  std::string ToString() const;
  bool is(Errc e) const { return code == make_error_code(e); }
};

template <class T>
class Result {
 public:
  // An operation that never ran (Asio's co_spawn needs a default value).
  Result() : v_(Error{make_error_code(Errc::kClientClosed), "no result"}) {}
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design, like expected
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  Result(Errc e, std::string message = {}) : v_(Error{make_error_code(e), std::move(message)}) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace latch

template <>
struct std::is_error_code_enum<latch::Errc> : std::true_type {};
