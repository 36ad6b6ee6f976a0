// AWS Signature Version 4: verification of incoming requests (Authorization-header form and
// presigned query-string form) and signing of outgoing ones (used by the load generator and
// by tests). Errors are DynamoDB's: MissingAuthenticationTokenException,
// IncompleteSignatureException, InvalidSignatureException and UnrecognizedClientException,
// with the messages DynamoDB sends.
//
// Thread-safety: every function is reentrant; a CredentialStore is immutable once loaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace fdyno::http {

// One key pair from the credentials file and the account it belongs to.
struct Credential {
  std::string access_key_id;
  std::string secret_access_key;
  std::string account_id;
};

// The keys the server accepts. Empty means open mode (no signature is checked).
class CredentialStore {
 public:
  // Parses "ACCESS_KEY_ID SECRET_ACCESS_KEY ACCOUNT_ID" lines; '#' starts a comment, blank
  // lines are ignored. Errors name the file and line.
  static Result<CredentialStore> Parse(std::string_view text, std::string_view source_name);
  static Result<CredentialStore> LoadFile(const std::string& path);

  void Add(Credential credential);
  // Null when the key id is unknown.
  const Credential* Find(std::string_view access_key_id) const;
  bool empty() const { return by_key_.empty(); }
  size_t size() const { return by_key_.size(); }
  // The account of the first key added (the file's first line); "" when empty.
  const std::string& FirstAccount() const { return first_account_; }

 private:
  std::map<std::string, Credential, std::less<>> by_key_;
  std::string first_account_;
};

// The parts of an HTTP request that SigV4 covers. Views point into the caller's request.
struct SignedRequest {
  std::string_view method;
  std::string_view target;  // origin-form request target: path, then '?' and raw query
  // Every header as received (name in any case). Repeated names are allowed.
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  std::string_view body;  // as received (before any Content-Encoding is undone)
};

struct VerifyOptions {
  std::string region = "us-east-1";
  std::string service = "dynamodb";
  int64_t now_ms = 0;                    // wall clock, milliseconds since the epoch
  int64_t max_skew_ms = 15 * 60 * 1000;  // X-Amz-Date must be within this of now
  // Amazon S3's rules (service "s3"): the canonical request holds the path encoded once, not
  // twice; X-Amz-Content-Sha256 may be UNSIGNED-PAYLOAD, or a STREAMING-* form whose body is
  // aws-chunked (its chunk signatures are not checked); a presigned URL signs UNSIGNED-PAYLOAD.
  bool s3 = false;
};

// Who signed a request.
struct Identity {
  std::string access_key_id;
  std::string account_id;
  std::string region;  // of the signature's credential scope
};

// The account of every caller in open mode.
inline constexpr std::string_view kOpenModeAccount = "000000000001";

// The account of (access key, region) in open mode with --database-per-key (DynamoDB Local
// without -sharedDb: one database per access key and region): 12 decimal digits of the 64-bit
// FNV-1a hash of "<access key>\n<region>", never kOpenModeAccount. Persisted in effect (it
// names the tables' owner in the catalog, docs/format/catalog.md): never change it.
std::string LocalAccount(std::string_view access_key_id, std::string_view region);

// Verifies a request. With an empty store (open mode) only the form of the signature is
// checked (any well-formed Authorization header or presigned query is accepted, as DynamoDB
// Local does) and the identity has the key id and the account kOpenModeAccount.
Result<Identity> Verify(const SignedRequest& request, const CredentialStore& store,
                        const VerifyOptions& options);

// ---- Building blocks, public for signing and tests ----

std::string HexEncode(std::string_view bytes);
std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
// kSigning = HMAC chain over "AWS4"+secret, date (YYYYMMDD), region, service, "aws4_request".
std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service);
// RFC 3986 encoding as SigV4 wants it: unreserved characters (A-Za-z0-9-._~) kept, every
// other byte as %XX (upper-case hex); '/' kept when keep_slash.
std::string UriEncode(std::string_view s, bool keep_slash);
// Percent-decoding; '+' is kept literally (SigV4 does not treat it as a space).
std::string UriDecode(std::string_view s);

// The canonical request, given the names of the signed headers (lower case, sorted, as in
// SignedHeaders) and the payload hash to use. Query parameters named in exclude_query (e.g.
// X-Amz-Signature for the presigned form) are left out.
// With s3_path the path is encoded once (S3's rule) instead of twice (every other service's).
std::string CanonicalRequest(const SignedRequest& request,
                             const std::vector<std::string>& signed_headers,
                             std::string_view payload_hash, std::string_view exclude_query = {},
                             bool s3_path = false);
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// "YYYYMMDDTHHMMSSZ" for a wall-clock time.
std::string AmzDate(int64_t epoch_ms);
// Parses "YYYYMMDDTHHMMSSZ" into seconds since the epoch; nullopt when malformed.
std::optional<int64_t> ParseAmzDate(std::string_view s);

// Header-form signing. The request's headers must already include Host (and every header to
// be signed); all of them are signed. Returns the headers to add: X-Amz-Date and
// Authorization.
struct SigningParams {
  std::string access_key_id;
  std::string secret_access_key;
  std::string region = "us-east-1";
  std::string service = "dynamodb";
  int64_t now_ms = 0;
};
std::vector<std::pair<std::string, std::string>> SignHeaders(const SignedRequest& request,
                                                             const SigningParams& params);

}  // namespace fdyno::http
