// The domain rules alone: no database, no sockets.
#include <gtest/gtest.h>

#include "domain/rules.h"

namespace latch::demo {
namespace {

TEST(DomainRulesTest, LockOrderIsAscendingWhateverTheRequestOrder) {
  EXPECT_EQ(LockOrder({7, 2, 9, 1}), (std::vector<SeatNo>{1, 2, 7, 9}));
  EXPECT_EQ(SeatLockKey(12, 7), "lock:seat:12:7");
}

TEST(DomainRulesTest, SeatRequestValidation) {
  EXPECT_FALSE(ValidateSeatRequest("alice", {1, 2}));
  EXPECT_TRUE(ValidateSeatRequest("", {1}));
  EXPECT_TRUE(ValidateSeatRequest(std::string("a\0b", 3), {1}));
  EXPECT_TRUE(ValidateSeatRequest(std::string(kMaxUserBytes + 1, 'u'), {1}));
  EXPECT_TRUE(ValidateSeatRequest("alice", {}));
  EXPECT_TRUE(ValidateSeatRequest("alice", {3, 3}));
  EXPECT_TRUE(ValidateSeatRequest("alice", {0}));
  EXPECT_TRUE(ValidateSeatRequest("alice", {kMaxSeatsPerEvent + 1}));
  std::vector<std::int64_t> many;
  for (std::size_t i = 1; i <= kMaxSeatsPerReservation + 1; ++i) many.push_back(i);
  EXPECT_TRUE(ValidateSeatRequest("alice", many));
  many.pop_back();
  EXPECT_FALSE(ValidateSeatRequest("alice", many));
}

TEST(DomainRulesTest, EventValidation) {
  EXPECT_FALSE(ValidateNewEvent("concert", 1));
  EXPECT_FALSE(ValidateNewEvent("concert", kMaxSeatsPerEvent));
  EXPECT_TRUE(ValidateNewEvent("concert", 0));
  EXPECT_TRUE(ValidateNewEvent("concert", kMaxSeatsPerEvent + 1));
  EXPECT_TRUE(ValidateNewEvent("", 10));
  EXPECT_TRUE(ValidateNewEvent(std::string("a\0", 2), 10));
}

TEST(DomainRulesTest, Transitions) {
  EXPECT_EQ(ConfirmTransition(ReservationStatus::kHeld), Transition::kApply);
  EXPECT_EQ(ConfirmTransition(ReservationStatus::kConfirmed), Transition::kAlreadyDone);
  EXPECT_EQ(ConfirmTransition(ReservationStatus::kExpired), Transition::kReject);
  EXPECT_EQ(ConfirmTransition(ReservationStatus::kCancelled), Transition::kReject);
  EXPECT_EQ(CancelTransition(ReservationStatus::kHeld), Transition::kApply);
  EXPECT_EQ(CancelTransition(ReservationStatus::kConfirmed), Transition::kApply);
  EXPECT_EQ(CancelTransition(ReservationStatus::kCancelled), Transition::kAlreadyDone);
  EXPECT_EQ(CancelTransition(ReservationStatus::kExpired), Transition::kReject);
  for (auto s : {ReservationStatus::kHeld, ReservationStatus::kConfirmed,
                 ReservationStatus::kCancelled, ReservationStatus::kExpired}) {
    EXPECT_EQ(ParseReservationStatus(ReservationStatusName(s)), s);
  }
}

}  // namespace
}  // namespace latch::demo
