#include "commands/reply_cap.h"

namespace latch {

ReplyCap::ReplyCap(const CommandContext& ctx) : out_(ctx.out.buffer()), start_(out_->size()) {
  const auto& hard =
      ctx.session.subscriptions != 0 ? ctx.server.obuf_pubsub_hard : ctx.server.obuf_hard;
  limit_ = static_cast<std::size_t>(hard.load(std::memory_order_relaxed));
}

void ReplyCap::Stop(CommandContext& ctx) const {
  if (ctx.origin == CommandOrigin::kClient && ctx.host != nullptr) {
    ctx.session.close_after_reply = true;
    return;
  }
  ctx.out.buffer()->resize(start_);
  ctx.out.Error("ERR reply exceeds client-output-buffer-limit");
}

}  // namespace latch
