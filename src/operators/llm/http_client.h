// A blocking HTTP POST over libcurl, with the timeouts an LLM call needs.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kernelevolve::operators::llm {

/// What went wrong below HTTP (no status code came back, or the body was cut off).
enum class TransportError {
  kNone,       // a complete response was received (any status)
  kTimeout,    // total limit, connect limit or low-speed limit hit (a hung server)
  kConnect,    // could not connect (refused, DNS, TLS handshake)
  kTruncated,  // the connection closed before the announced body was complete
  kOther,      // any other libcurl failure (message says which)
};

/// One POST request.
struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double timeout_seconds = 300;        // whole transfer, CURLOPT_TIMEOUT_MS
  double connect_timeout_seconds = 10; // CURLOPT_CONNECTTIMEOUT_MS
  /// Abort when fewer than 1 byte/s arrive for this long (CURLOPT_LOW_SPEED_LIMIT/TIME,
  /// whole seconds, at least 1); 0: only the total timeout applies.
  double stall_seconds = 0;
};

/// What came back.
struct HttpResponse {
  int status = 0;  // HTTP status code; 0 when no response line arrived
  std::map<std::string, std::string> headers;  // names lowercased; the last value wins
  std::string body;
  TransportError error = TransportError::kNone;
  std::string error_message;  // libcurl's message, empty when error == kNone
  double seconds = 0;         // wall time of the transfer
};

/// Posts the request and waits for the answer (libcurl easy interface, one handle per
/// call, so concurrent calls from several threads are safe). Never throws for network
/// failures: they come back as `error`.
HttpResponse HttpPost(const HttpRequest& request);

/// "timeout" | "connect" | "truncated" | "other" | "none".
const char* TransportErrorName(TransportError error);

}  // namespace kernelevolve::operators::llm
