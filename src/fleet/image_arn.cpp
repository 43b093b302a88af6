#include "fleet/image_arn.h"

#include "base/retry.h"
#include "fleet/network_connectors.h"

namespace mvr::fleet {

Result<std::string> ResolveImageArn(const Seam& seam, aws::MicrovmService& microvms,
                                    const std::string& identifier, TimePoint deadline) {
  if (IsImageArn(identifier)) return identifier;
  Result<aws::MicrovmImage> image =
      Retry<aws::MicrovmImage>(PolicyUntil(seam.clock, deadline, RetryPolicy()), seam,
                               [&] { return microvms.GetMicrovmImage(identifier); });
  if (!image.ok()) {
    return image.status().Annotate(
        "resolving image \"" + identifier +
        "\" to its ARN (GetMicrovmImage; RunMicrovm takes the image ARN): give the image's ARN, "
        "or a name this role may read (lambda:GetMicrovmImage)");
  }
  if (!IsImageArn(image->image_arn)) {
    return Internal("GetMicrovmImage of \"" + identifier + "\" answered no image ARN (got \"" +
                    image->image_arn + "\")");
  }
  return image->image_arn;
}

}  // namespace mvr::fleet
