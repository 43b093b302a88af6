#include "runnerset/scaleset/listener.h"

#include <algorithm>

namespace mvr::runnerset {

std::vector<int64_t> OffersToAcquire(const std::vector<github::ScaleSetJobEvent>& events,
                                     int free_capacity) {
  std::vector<int64_t> out;
  for (const auto& e : events) {
    if (static_cast<int>(out.size()) >= free_capacity) break;
    if (e.type != "JobAvailable") continue;
    if (std::find(out.begin(), out.end(), e.runner_request_id) != out.end()) continue;
    out.push_back(e.runner_request_id);
  }
  return out;
}

ScaleSetListener::ScaleSetListener(github::ScaleSetClient& client, int64_t scale_set_id, Seam seam,
                                   ScaleSetListenerOptions options)
    : client_(client), scale_set_id_(scale_set_id), seam_(seam), options_(std::move(options)) {}

Status ScaleSetListener::Open() {
  const TimePoint give_up = seam_.clock.Now() + options_.conflict_give_up;
  while (true) {
    auto session = client_.CreateSession(scale_set_id_, options_.owner);
    if (session.ok()) {
      session_ = *session;
      statistics_ = session->statistics;
      seam_.logger.Info("scale set session opened", {{"scale_set_id", scale_set_id_}});
      return Status::Ok();
    }
    if (session.status().code() != Code::kConflict || seam_.clock.Now() >= give_up) {
      return session.status();
    }
    // Another listener holds the set: a previous process of ours killed with -9, whose session
    // GitHub ends once it stops polling, or a second `mvr serve` on the same set.
    seam_.logger.Warn("scale set session held by another listener; waiting",
                      {{"scale_set_id", scale_set_id_}});
    seam_.sleeper.Sleep(options_.conflict_retry);
  }
}

Result<std::optional<github::ScaleSetMessage>> ScaleSetListener::Get(int max_capacity) {
  auto got = client_.GetMessage(*session_, last_message_id_, max_capacity);
  if (got.ok() || got.status().code() != Code::kUnauthorized) return got;
  MVR_ASSIGN_OR_RETURN(session_, client_.RefreshSession(*session_));
  return client_.GetMessage(*session_, last_message_id_, max_capacity);
}

Result<int> ScaleSetListener::PollOnce(int max_capacity, int free_capacity,
                                       const ScaleSetEventSink& sink) {
  if (!session_) return Internal("the scale set listener has no session; Open it first");
  MVR_ASSIGN_OR_RETURN(std::optional<github::ScaleSetMessage> message, Get(max_capacity));
  if (!message) return 0;
  statistics_ = message->statistics;
  const std::vector<int64_t> wanted = OffersToAcquire(message->events, free_capacity);
  if (!wanted.empty()) {
    // What the set does not acquire is offered again once GitHub's acquire timeout passes.
    MVR_RETURN_IF_ERROR(client_.AcquireJobs(*session_, wanted).status());
  }
  int handed = 0;
  for (const auto& e : message->events) {
    if (e.type == "JobAvailable") continue;
    // Not acknowledged: the message comes again, and the sink sees its events again.
    MVR_RETURN_IF_ERROR(sink(e));
    ++handed;
  }
  MVR_RETURN_IF_ERROR(client_.DeleteMessage(*session_, message->message_id));
  last_message_id_ = message->message_id;
  return handed;
}

Status ScaleSetListener::Close() {
  if (!session_) return Status::Ok();
  Status s = client_.DeleteSession(*session_);
  if (s.ok()) session_.reset();
  return s;
}

}  // namespace mvr::runnerset
