// Operations sent to a running server (`fdyno mcp --endpoint URL`): each tool's operations as
// HTTP requests to the server's DynamoDB endpoint, signed with SigV4 as an SDK signs them, so the
// agent works on the same tables as the applications talking to that server.
//
// Thread-safety: the Invoke it returns is thread-safe (one connection per call).
#pragma once

#include <chrono>
#include <string>

#include "base/result.h"
#include "mcp/tools.h"

namespace fdyno::mcp {

struct RemoteOptions {
  std::string endpoint;  // http://HOST[:PORT][/] or https://HOST[:PORT][/]
  // https: the certificate authorities the server's certificate must chain to (PEM); empty:
  // the system's (OpenSSL's default paths).
  std::string ca_file;
  std::string access_key_id;
  std::string secret_access_key;
  std::string region = "us-east-1";
  std::chrono::milliseconds timeout{30'000};  // each call, connection included
};

// Errors: Validation for an endpoint it cannot use (not http:// or https://HOST[:PORT]) or a CA
// file it cannot read.
Result<Invoke> RemoteInvoke(RemoteOptions options);

}  // namespace fdyno::mcp
