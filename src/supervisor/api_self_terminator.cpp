#include "supervisor/api_self_terminator.h"

#include "aws/microvms/microvms_errors.h"

namespace mvr::supervisor {

Status ApiSelfTerminator::TerminateSelf(const std::string& microvm_id) {
  int attempts = 0;
  Status s = RetryStatus(
      policy_, seam_,
      [&] {
        ++attempts;
        Status r = service_.TerminateMicrovm(microvm_id);
        if (r.code() == Code::kNotFound) return Status::Ok();
        return r;
      },
      aws::IsRetryableMicrovmsError);
  seam_.logger.Info("TerminateMicrovm on self",
                    {{"microvm_id", microvm_id}, {"attempts", attempts}, {"ok", s.ok()}});
  return s;
}

}  // namespace mvr::supervisor
