// AWS Systems Manager Parameter Store, the one call mvr needs: GetParameter with decryption, over
// the AWS JSON protocol 1.1 (AmazonSSM.GetParameter), SigV4 signed. The `mvr lambda` functions
// read their secrets (SecureString parameters) with it once per container. The value comes back
// as a Secret; no error message carries it.
// Thread-safety: safe to share between threads when the injected seam objects are.
#pragma once

#include <string>

#include "aws/services/json_protocol.h"
#include "base/secret.h"

namespace mvr::aws {

class SsmClient {
 public:
  SsmClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
            CredentialsProvider& credentials, Seam seam);

  // The parameter's value, decrypted (WithDecryption). NotFound when no parameter has that name
  // (ParameterNotFound); Unauthorized when the caller may not read it or its key; InvalidArgument
  // for a malformed name. Throttling and 5xx are retried.
  Result<Secret> GetParameter(const std::string& name);

 private:
  JsonProtocolClient rpc_;
};

}  // namespace mvr::aws
