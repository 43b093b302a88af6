// The token-formats scenario's invariant (issue 55, item 2): GitHub answers 404 on
// POST /app/installations/{id}/access_tokens to a JWT it saw within the second
// (terraform-aws-github-runner #5056), and a client that takes that 404 for "not found" loses the
// job it wanted the token for. The set's JWTs must all differ (a random jti), and each process
// asks once at a time (single flight): then GitHub never has to refuse one. That every job still
// ran is CheckJobs'.
#include "sim/world.h"

namespace mvr::sim {

void World::CheckTokenRequests(WorldReport& report) {
  if (!UsesApps()) return;
  const int refused = github_->auth().same_second_refusals();
  if (refused == 0) return;
  report.violations.push_back(
      "GitHub answered 404 to " + std::to_string(refused) +
      " installation token requests whose JWT it had seen within the second (same iat and jti: "
      "terraform-aws-github-runner #5056)");
}

}  // namespace mvr::sim
