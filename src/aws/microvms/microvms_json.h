// The MicroVMs types to and from the model's JSON: requests become an operation's full input
// (body and uri/querystring members under their member names, as ServiceModel::ValidateInput
// and the rest-json binder take them), and output bodies are read by the model's member names.
// Unknown members are ignored; a member of the wrong type is Internal, naming the field. With
// `strict`, a member the parser does not read is an error too (tests use it to prove coverage).
// Thread-safety: pure functions. Inputs carry secrets (runHookPayload, environment values) in
// clear: they are for the request body only, never for logs.
#pragma once

#include <nlohmann/json.hpp>

#include "aws/microvms/microvms.h"

namespace mvr::aws {

// Inputs.
// out[name] = value, unless value is empty (an optional string member of a request).
void PutIfSet(nlohmann::json& out, const char* name, const std::string& value);
nlohmann::json RunMicrovmInput(const RunMicrovmRequest& request);
nlohmann::json ListMicrovmsInput(const ListMicrovmsRequest& request);
nlohmann::json CreateMicrovmAuthTokenInput(const CreateMicrovmAuthTokenRequest& request);
nlohmann::json CreateMicrovmImageInput(const CreateMicrovmImageRequest& request);
nlohmann::json UpdateMicrovmImageInput(const UpdateMicrovmImageRequest& request);
nlohmann::json ListMicrovmImagesInput(const ListMicrovmImagesRequest& request);
nlohmann::json ListMicrovmImageVersionsInput(const ListMicrovmImageVersionsRequest& request);
nlohmann::json UpdateMicrovmImageVersionInput(const UpdateMicrovmImageVersionRequest& request);
nlohmann::json ListMicrovmImageBuildsInput(const ListMicrovmImageBuildsRequest& request);
// Members shared by several inputs and outputs.
nlohmann::json LoggingJson(const MicrovmLogging& logging);
nlohmann::json HooksJson(const Hooks& hooks);
void AddImageConfiguration(const ImageConfiguration& config, nlohmann::json& out);

// Outputs.
Result<Microvm> ParseMicrovm(const nlohmann::json& body, bool strict = false);
Result<ListMicrovmsResponse> ParseListMicrovms(const nlohmann::json& body, bool strict = false);
Result<MicrovmAuthToken> ParseMicrovmAuthToken(const nlohmann::json& body, bool strict = false);
Result<MicrovmImage> ParseMicrovmImage(const nlohmann::json& body, bool strict = false);
Result<MicrovmImageChange> ParseMicrovmImageChange(const nlohmann::json& body, bool strict = false);
Result<ListMicrovmImagesResponse> ParseListMicrovmImages(const nlohmann::json& body,
                                                         bool strict = false);
Result<MicrovmImageVersion> ParseMicrovmImageVersion(const nlohmann::json& body,
                                                     bool strict = false);
Result<ListMicrovmImageVersionsResponse> ParseListMicrovmImageVersions(const nlohmann::json& body,
                                                                       bool strict = false);
Result<DeleteMicrovmImageVersionResponse> ParseDeleteMicrovmImageVersion(const nlohmann::json& body,
                                                                         bool strict = false);
Result<MicrovmImageBuild> ParseMicrovmImageBuild(const nlohmann::json& body, bool strict = false);
Result<ListMicrovmImageBuildsResponse> ParseListMicrovmImageBuilds(const nlohmann::json& body,
                                                                   bool strict = false);

// Epoch seconds as the rest-json body carries timestamps (fractional when milliseconds are set).
nlohmann::json EpochSecondsJson(TimePoint t);

}  // namespace mvr::aws
