// Step (2)'s seat under the fair share (fair_share.h): the waiting room says which repositories'
// jobs wait, the cap's seats which repositories hold how many, and DecideFairShare whether this
// launch takes a free seat or waits its repository's turn. A launch that waits is due back when
// its turn can come (FairShareDueIn), not every deferSeconds: each return re-reads its job on
// GitHub, and a backlog of hundreds returning every 10 s spent the set's 5,000 calls an hour in
// minutes.
#include <algorithm>

#include "runnerset/launch/launcher.h"
#include "runnerset/table/fair_share_waiting.h"

namespace mvr::runnerset {
namespace {

// The longest a deferred intent stays away: a seat that frees sooner than its estimate is taken
// by the intents nearer the front meanwhile.
constexpr Duration kLongestWait{300'000};

// How long a seat is held, from the seats held now: taken at random moments, they are on average
// halfway through their hold.
Duration HoldOf(const std::vector<CapSeat>& seats, int64_t now_ms, Duration floor) {
  int64_t sum = 0;
  int n = 0;
  for (const CapSeat& s : seats) {
    if (s.held_ms <= 0 || s.held_ms > now_ms) continue;
    sum += now_ms - s.held_ms;
    ++n;
  }
  return n == 0 ? floor : std::max(floor, Duration(2 * sum / n));
}

}  // namespace

Result<std::optional<CapSeat>> Launcher::TakeSeat(const LaunchIntent& in, SeatWait& wait) {
  const Seam& seam = deps_.seam;
  FairShareWaitingRoom room(deps_.table.store(), seam,
                            FairShareWaitingRoom::StaleAfter(config_.defer_delay()));
  Result<FairShareWaitingRoom::View> waiting = room.Read(in.repository, in.job_id);
  if (!waiting.ok()) {
    // The cap still holds; only the order between repositories is lost for this launch.
    seam.logger.Warn("reading the fair share's waiting room failed; taking any free seat",
                     {{"job_id", in.job_id}, {"error", waiting.status().ToString()}});
  }
  const FairShareWaitingRoom::View view = waiting.ok() ? *waiting : FairShareWaitingRoom::View{};
  const int64_t now_ms = ToUnixMillis(seam.clock.Now());
  FairShareInputs f;
  f.repository = in.repository;
  f.now_ms = now_ms;
  f.cap = config_.max_concurrent_vms;
  f.waiting = view.waiting;
  FairShareVerdict verdict = FairShareVerdict::kAdmit;
  std::vector<CapSeat> seen;
  auto admit = [&](const std::vector<CapSeat>& seats) {
    seen = seats;
    f.held_total = static_cast<int>(seats.size());
    f.held.clear();
    for (const CapSeat& s : seats) ++f.held[s.repository];
    verdict = DecideFairShare(f, config_.launcher.fair_share);
    return verdict != FairShareVerdict::kAtMax && verdict != FairShareVerdict::kOthersFirst;
  };
  CapLedger::Options options = CapOptions();
  options.repository = in.repository;
  Result<std::optional<CapSeat>> seat = cap_.Reserve(
      options, [this] { return ListLiveVms(); }, admit);
  if (!seat.ok()) return seat;
  Status noted = Status::Ok();
  if (*seat) {
    if (view.own_since_ms > 0) noted = room.Leave(in.repository, in.job_id);
  } else {
    wait.why = verdict == FairShareVerdict::kOthersFirst ? "fair_share"
               : verdict == FairShareVerdict::kAtMax     ? "fair_share_max"
                                                         : "cap";
    const int position = FairSharePosition(f, view.own_rank, config_.launcher.fair_share);
    wait.due = FairShareDueIn(position, f.cap, HoldOf(seen, now_ms, config_.defer_delay()),
                              config_.defer_delay(), kLongestWait);
    noted = room.Wait(in.repository, in.job_id, view.own_since_ms > 0 ? view.own_since_ms : now_ms,
                      now_ms + wait.due.count());
  }
  if (!noted.ok()) {
    // A row not written makes this job's turn later; one not removed goes stale soon after.
    seam.logger.Warn("updating the fair share's waiting room failed",
                     {{"job_id", in.job_id}, {"error", noted.ToString()}});
  }
  return seat;
}

}  // namespace mvr::runnerset
