#include "runnerset/scaleset/intake/scaleset_source.h"

#include <algorithm>

#include "runnerset/scaleset/intake/scaleset_intents.h"
#include "runnerset/scaleset/listener.h"

namespace mvr::runnerset {

Status RecordScaleSetBinding(RunnerTable& table, const github::ScaleSetJobEvent& event,
                             const ServeConfig& config, TimePoint now) {
  const bool ours =
      !event.runner_name.empty() && event.runner_name.rfind(config.runner_name_prefix, 0) == 0;
  if (!ours || (event.type != "JobStarted" && event.type != "JobCompleted")) return Status::Ok();
  JobBinding b;
  b.runner_name = event.runner_name;
  b.runner_id = event.runner_id;
  b.repository = event.repository;
  b.job_id = event.runner_request_id;
  if (event.type == "JobStarted") {
    b.started_ms = ToUnixMillis(now);
    return table.RecordJobStarted(b);
  }
  b.ended_ms = ToUnixMillis(now);
  return table.RecordJobEnded(b);
}

ScaleSetSource::ScaleSetSource(const ServeConfig& config, Seam seam, github::ScaleSetClient& client,
                               queue::Queue& queue, RunnerTable& table,
                               ScaleSetSourceOptions options)
    : config_(config),
      seam_(seam),
      client_(client),
      queue_(queue),
      table_(table),
      options_(options) {}

ScaleSetSource::~ScaleSetSource() { Stop(); }

Status ScaleSetSource::EnsureSets() {
  sets_.clear();
  for (const RunnerClass& cls : config_.classes) {
    Result<github::ScaleSetInfo> set =
        client_.EnsureScaleSet(cls.label, {}, config_.github.runner_group_id);
    if (!set.ok()) {
      return set.status().Annotate("the scale set of class " + cls.label + " (runner group " +
                                   std::to_string(config_.github.runner_group_id) + ")");
    }
    seam_.logger.Info("scale set ready", {{"class", cls.label}, {"scale_set_id", set->id}});
    sets_.push_back({cls.label, set->id});
  }
  assigned_.assign(sets_.size(), 0);
  return Status::Ok();
}

void ScaleSetSource::Start() {
  stopping_ = false;
  for (size_t i = 0; i < sets_.size(); ++i)
    threads_.emplace_back([this, i] { Listen(i, [this] { return stopping_.load(); }); });
}

void ScaleSetSource::Stop() {
  stopping_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

int ScaleSetSource::FreeCapacity(size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  return FreeScaleSetCapacity(config_.max_concurrent_vms, assigned_, index);
}

void ScaleSetSource::NoteAssigned(size_t index, int assigned) {
  std::lock_guard<std::mutex> lock(mu_);
  assigned_[index] = assigned;
}

void ScaleSetSource::Pause(Duration wait, const std::function<bool()>& stopping) {
  const TimePoint until = seam_.clock.Now() + wait;
  while (!stopping() && seam_.clock.Now() < until) {
    seam_.sleeper.Sleep(std::min(Duration(250), until - seam_.clock.Now()));
  }
}

Status ScaleSetSource::Deliver(size_t index, const github::ScaleSetJobEvent& event) {
  const RunnerClass* cls = config_.FindClass(sets_[index].class_label);
  if (!cls) return Status::Ok();
  // The binding first: the janitor's evidence must not lag the terminate intent that follows.
  MVR_RETURN_IF_ERROR(RecordScaleSetBinding(table_, event, config_, seam_.clock.Now()));
  if (event.type == "JobStarted") {
    seam_.logger.Info("scale set job started", {{"class", cls->label},
                                                {"runner_request_id", event.runner_request_id},
                                                {"runner_name", event.runner_name}});
  }
  std::optional<Intent> intent =
      IntentOfScaleSetEvent(event, *cls, sets_[index].id, config_, seam_.clock.Now());
  if (!intent) return Status::Ok();
  // The message is acknowledged only after this: a failure here leaves it to come again.
  MVR_RETURN_IF_ERROR(queue_.Send(queue::OutgoingMessage{EncodeIntent(*intent)}).status());
  seam_.logger.Info("scale set job event queued", {{"type", event.type},
                                                   {"class", cls->label},
                                                   {"runner_request_id", event.runner_request_id},
                                                   {"repository", event.repository}});
  return Status::Ok();
}

void ScaleSetSource::Listen(size_t index, const std::function<bool()>& stopping) {
  const Set set = sets_[index];
  ScaleSetListenerOptions lo;
  lo.owner = "mvr-" + config_.runner_set_id;
  lo.conflict_retry = std::min(options_.retry, options_.open_attempt);
  lo.conflict_give_up = options_.open_attempt;
  ScaleSetListener listener(client_, set.id, seam_, lo);
  auto sink = [this, index](const github::ScaleSetJobEvent& e) { return Deliver(index, e); };
  bool open = false;
  while (!stopping()) {
    if (!open) {
      if (Status s = listener.Open(); !s.ok()) {
        seam_.logger.Warn("cannot open the scale set's session yet",
                          {{"class", set.class_label}, {"error", s.ToString()}});
        Pause(options_.retry, stopping);
        continue;
      }
      open = true;
      NoteAssigned(index, listener.statistics().assigned_jobs);
    }
    Result<int> polled = listener.PollOnce(config_.max_concurrent_vms, FreeCapacity(index), sink);
    NoteAssigned(index, listener.statistics().assigned_jobs);
    if (polled.ok()) continue;
    seam_.logger.Warn("scale set poll failed",
                      {{"class", set.class_label}, {"error", polled.status().ToString()}});
    // A session GitHub ended (not polled in time, taken over) is gone: open another.
    const Code code = polled.status().code();
    if (code == Code::kNotFound || code == Code::kUnauthorized) open = false;
    Pause(options_.retry, stopping);
  }
  if (!open) return;
  if (Status s = listener.Close(); !s.ok()) {
    seam_.logger.Warn("deleting the scale set's session",
                      {{"class", set.class_label}, {"error", s.ToString()}});
  }
}

}  // namespace mvr::runnerset
