#pragma once
// Results of the use cases and the ports as values: a T or an AppError. The HTTP adapter maps
// each ErrorCode to one status code (see http/api_routes.cpp).
#include <string>
#include <utility>
#include <variant>

namespace latch::demo {

enum class ErrorCode {
  kBadInput,             // 400
  kNotFound,             // 404
  kSeatTaken,            // 409: the conditional UPDATE found a seat not available
  kLockBusy,             // 409: another request holds a seat's lock right now
  kStaleFence,           // 409: a newer lock holder has written the seat already
  kInvalidState,         // 409: e.g. confirming an expired or cancelled reservation
  kConflict,             // 409: PostgreSQL aborted the transaction (deadlock, serialization)
  kIdempotencyMismatch,  // 422: the key was first used with a different request
  kUnavailable,          // 503: PostgreSQL or the lock server cannot be reached
  kInternal,             // 500: a bug (an SQL error that should not happen)
};

struct AppError {
  ErrorCode code;
  std::string message;
};

struct Unit {};

template <class T>
class Outcome {
 public:
  Outcome(T value) : v_(std::move(value)) {}         // NOLINT: implicit, like Result
  Outcome(AppError error) : v_(std::move(error)) {}  // NOLINT
  Outcome(ErrorCode code, std::string message) : v_(AppError{code, std::move(message)}) {}

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
  const AppError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, AppError> v_;
};

}  // namespace latch::demo
