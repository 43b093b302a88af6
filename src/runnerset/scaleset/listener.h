// ScaleSetListener: the runner set's side of one runner scale set's message session (issue 54,
// item 2; not yet wired into `mvr serve`, see docs/runner-set-scaleset.md). It opens the set's one
// session, waiting out a session another listener still holds (a listener killed with -9 holds
// it until GitHub ends it); it long-polls, acquires the offered jobs (JobAvailable) up to the free
// capacity it is told, hands every other job event to a sink that makes its effect durable, and
// acknowledges a message only once every event of it was acquired or handed on: a message whose
// effect failed comes again. A 401 refreshes the session once. Close deletes the session.
// Thread-safety: one thread at a time; no lock of its own.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "base/status.h"
#include "github/scaleset_client.h"

namespace mvr::runnerset {

struct ScaleSetListenerOptions {
  std::string owner = "mvr-serve";
  Duration conflict_retry{10'000};     // between attempts while another session holds the set
  Duration conflict_give_up{300'000};  // then Open fails with the Conflict
};

// Ok only once the event's effect is durable (an intent queued, a state written).
using ScaleSetEventSink = std::function<Status(const github::ScaleSetJobEvent&)>;

// The runnerRequestIds to acquire of `events`' JobAvailable offers: the first `free_capacity`
// (none when it is 0 or less), each once.
std::vector<int64_t> OffersToAcquire(const std::vector<github::ScaleSetJobEvent>& events,
                                     int free_capacity);

class ScaleSetListener {
 public:
  ScaleSetListener(github::ScaleSetClient& client, int64_t scale_set_id, Seam seam,
                   ScaleSetListenerOptions options = {});

  Status Open();
  // One long poll. `max_capacity` is what the set can take at all (X-ScaleSetMaxCapacity);
  // `free_capacity` how many more jobs it can take now. Returns how many events were handed to
  // `sink` (0 when GitHub had no message). REQUIRES: Open succeeded.
  Result<int> PollOnce(int max_capacity, int free_capacity, const ScaleSetEventSink& sink);
  Status Close();
  // The statistics of the session's last message (or of its opening).
  const github::ScaleSetStatistics& statistics() const { return statistics_; }

 private:
  Result<std::optional<github::ScaleSetMessage>> Get(int max_capacity);

  github::ScaleSetClient& client_;
  const int64_t scale_set_id_;
  Seam seam_;
  const ScaleSetListenerOptions options_;
  std::optional<github::ScaleSetSessionInfo> session_;
  int64_t last_message_id_ = 0;
  github::ScaleSetStatistics statistics_;
};

}  // namespace mvr::runnerset
