// ScaleSetSource: the runner set's jobs from GitHub's runner scale-set API (issue 54), as
// `mvr serve` runs it with github.source `scaleset` or `both`. Each class is a scale set named by
// its label in the set's runner group (found, created or updated by EnsureSets); one listener per
// set holds the set's one message session, acquires offered jobs only up to the free capacity
// (maxConcurrentVMs less what GitHub counts as assigned to the other sets; GitHub's back-pressure
// bounds the set's own: FreeScaleSetCapacity), and puts each event's intent
// (scaleset_intents.h) on the job queue the webhook intake feeds, acknowledging the message only
// once the intent is queued. Everything outside comes through the seam, the client and the queue,
// so the host chooses where a listener runs (Listen): `mvr serve` on a thread per set (Start,
// Stop), the simulation as an actor in virtual time.
// Thread-safety: EnsureSets, Start and Stop from one thread; Listen of different sets may run at
// once (the shared capacity figures are under a lock never held across a call).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/seam.h"
#include "base/status.h"
#include "github/scaleset_client.h"
#include "queue/queue.h"
#include "runnerset/config/config.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

struct ScaleSetSourceOptions {
  Duration retry{2'000};  // after a failed open or poll, before the next
  // How long one attempt to open a session waits out another's (a predecessor killed with -9
  // holds its session until GitHub ends it); then Stop is looked at and the attempt repeated.
  Duration open_attempt{10'000};
};

// What a JobStarted or JobCompleted of one of the set's runners (its name carries the runner-name
// prefix) tells the janitor: the job↔runner binding, recorded or ended at `now` in `table`
// (issue 54, item 3). Ok and nothing written for any other event.
Status RecordScaleSetBinding(RunnerTable& table, const github::ScaleSetJobEvent& event,
                             const ServeConfig& config, TimePoint now);

class ScaleSetSource {
 public:
  struct Set {
    std::string class_label;
    int64_t id = 0;
  };

  // `client`, `queue` and `table` must outlive this. `table` takes the JobStarted/JobCompleted
  // bindings (RecordScaleSetBinding).
  ScaleSetSource(const ServeConfig& config, Seam seam, github::ScaleSetClient& client,
                 queue::Queue& queue, RunnerTable& table, ScaleSetSourceOptions options = {});
  ~ScaleSetSource();

  // Each class's set, found by name, created or updated; the error names the class.
  Status EnsureSets();
  // One listener thread per set, each running Listen until Stop. REQUIRES: EnsureSets succeeded.
  void Start();
  // Stops taking messages: waits for each listener's current poll, then deletes its session.
  void Stop();
  const std::vector<Set>& sets() const { return sets_; }

  // Set `index`'s listener on the calling thread until `stopping()` is true (it is asked between
  // polls and during every pause): opens the session (waiting out one another listener holds),
  // polls, queues each event's intent, and deletes the session when told to stop. An exception
  // from a seam call (a crash in the simulation) ends it with the session left to GitHub, as
  // kill -9 leaves it. REQUIRES: EnsureSets succeeded; `index` < sets().size().
  void Listen(size_t index, const std::function<bool()>& stopping);

 private:
  Status Deliver(size_t index, const github::ScaleSetJobEvent& event);
  int FreeCapacity(size_t index);  // FreeScaleSetCapacity of set `index`
  void NoteAssigned(size_t index, int assigned);
  void Pause(Duration wait, const std::function<bool()>& stopping);

  const ServeConfig& config_;
  Seam seam_;
  github::ScaleSetClient& client_;
  queue::Queue& queue_;
  RunnerTable& table_;
  const ScaleSetSourceOptions options_;
  std::vector<Set> sets_;
  std::mutex mu_;              // guards assigned_
  std::vector<int> assigned_;  // GitHub's totalAssignedJobs of each set, as last told
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace mvr::runnerset
