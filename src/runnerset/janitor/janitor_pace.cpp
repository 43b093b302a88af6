// Janitor: its sweeps paced to GitHub's hourly budget (issue 30, item 4). A sweep costs a few
// GETs (runners, queued runs, their jobs, per-job reads); at a short interval that outruns the
// 5,000 an hour an installation has, and once the budget is spent nothing goes until it resets,
// launches included (simulation, stale-runner-version seed 191: a 1 s janitor spent it in 14
// minutes, and the jobs waited 45 minutes). So once half the budget is spent the janitor keeps a
// fifth of it for launches and spreads the rest evenly over the time left until the reset, by
// stretching its interval; a sweep costs what the last one did.
#include <algorithm>

#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {

bool Janitor::PacedByBudget() {
  const std::optional<github::RateBudgetSnapshot> budget = deps_.github.RateBudgetNow();
  const Duration interval(config_.janitor.interval_seconds * 1000LL);
  const TimePoint now = deps_.seam.clock.Now();
  Duration stretched = interval;
  bool exhausted = false;  // nothing above the fifth kept for launches: no sweep until the reset
  if (budget && budget->primary && budget->primary->limit > 0) {
    const github::RateLimit& p = *budget->primary;
    const Duration to_reset = p.reset - now;
    const int64_t spendable = p.remaining - p.limit / 5;
    // While more than half the hour's budget is left the janitor sweeps at its own interval:
    // pacing is for a budget at risk, not for every short interval.
    if (to_reset > Duration(0) && p.remaining <= p.limit / 2) {
      exhausted = spendable <= 0;
      // The interval that spends `spendable` by the reset at `last_cost_` a sweep.
      // (At most until the reset; the cost is a guess: the launches' calls in between count.)
      stretched = spendable <= 0
                      ? to_reset
                      : std::clamp(Duration(to_reset.count() * std::max<int64_t>(last_cost_, 1) /
                                            spendable),
                                   interval, std::max(interval, to_reset));
    }
  }
  const bool stretching = stretched > interval;
  if (stretching != pacing_) {
    pacing_ = stretching;
    if (stretching) {
      deps_.seam.logger.Info(
          "janitor: sweeping less often to keep GitHub's hourly budget for launches",
          {{"interval_ms",
            std::chrono::duration_cast<std::chrono::milliseconds>(stretched).count()},
           {"remaining", budget->primary->remaining},
           {"limit", budget->primary->limit}});
    } else {
      deps_.seam.logger.Info("janitor: sweeping at its own interval again");
    }
  }
  return stretching && last_swept_ && (exhausted || now - *last_swept_ < stretched);
}

}  // namespace mvr::runnerset
