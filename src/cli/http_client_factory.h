// The outgoing HttpClient of the running executable, chosen at link time: libcurl's in `mvr`
// (curl_http_factory.cpp), the socket one in the Lambda bootstrap `mvr-lambda`
// (socket_http_factory.cpp), which thereby loads none of libcurl's dependency tree.
// Thread-safety: the clients are safe to share between threads.
#pragma once

#include <memory>
#include <string>

#include "http/client.h"

namespace mvr::cli {

// `ca_file`: the CA bundle for HTTPS; "" = the system's. `ca_pem`: more CAs, as PEM text, trusted
// beside the system's (instead of ca_file).
std::unique_ptr<http::HttpClient> NewHttpClient(const std::string& ca_file,
                                                const std::string& ca_pem = "");

}  // namespace mvr::cli
