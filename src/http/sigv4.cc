#include "http/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/regions.h"
#include "http/ascii.h"

namespace fdyno::http {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kTerminator = "aws4_request";
constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// The open-mode caller's account. Not DynamoDB Local's all-zero account: clients and tests
// name 000000000000 as "some other account", and its ARNs must not look like the caller's.
constexpr std::string_view kDefaultAccount = kOpenModeAccount;

constexpr std::string_view kSignatureMismatch =
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.";

Error Missing() {
  return Error::Make(ErrorType::kMissingAuthenticationToken,
                     "Request is missing Authentication Token");
}
Error Incomplete(std::string message) {
  return Error::Make(ErrorType::kIncompleteSignature, std::move(message));
}
Error Invalid(std::string message) {
  return Error::Make(ErrorType::kInvalidSignature, std::move(message));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Header value as SigV4 canonicalizes it: trimmed, runs of spaces collapsed to one.
void AppendCanonicalValue(std::string& out, std::string_view value) {
  value = Trim(value);
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
}

const std::string_view* FindHeader(const SignedRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (AsciiIEquals(k, name)) return &v;
  }
  return nullptr;
}

std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

// Raw query "a=b&c" -> decoded (key, value) pairs, in order.
std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      out.emplace_back(UriDecode(part), std::string());
    } else {
      out.emplace_back(UriDecode(part.substr(0, eq)), UriDecode(part.substr(eq + 1)));
    }
  }
  return out;
}

const std::string* FindParam(const std::vector<std::pair<std::string, std::string>>& params,
                             std::string_view name) {
  for (const auto& [k, v] : params) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::vector<std::string> SplitSignedHeaders(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t semi = s.find(';');
    std::string_view part = Trim(s.substr(0, semi));
    if (!part.empty()) out.push_back(AsciiLowered(part));
    if (semi == std::string_view::npos) break;
    s.remove_prefix(semi + 1);
  }
  return out;
}

// Parses an HTTP date (RFC 1123), used when a client sends Date instead of X-Amz-Date.
std::optional<int64_t> ParseHttpDate(std::string_view s) {
  std::tm tm{};
  std::string copy(s);
  const char* end = strptime(copy.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

std::string FormatMinutes(int64_t ms) { return std::to_string(ms / 60000) + " min."; }

// Checks the request time against now within the allowed skew.
Status CheckTime(int64_t request_s, const VerifyOptions& options) {
  int64_t now_ms = options.now_ms;
  int64_t request_ms = request_s * 1000;
  if (request_ms < now_ms - options.max_skew_ms) {
    return Invalid("Signature expired: " + AmzDate(request_ms) + " is now earlier than " +
                   AmzDate(now_ms - options.max_skew_ms) + " (" + AmzDate(now_ms) + " - " +
                   FormatMinutes(options.max_skew_ms) + ")");
  }
  if (request_ms > now_ms + options.max_skew_ms) {
    return Invalid("Signature not yet current: " + AmzDate(request_ms) + " is still later than " +
                   AmzDate(now_ms + options.max_skew_ms) + " (" + AmzDate(now_ms) + " + " +
                   FormatMinutes(options.max_skew_ms) + ")");
  }
  return Status::Ok();
}

// Whether a SignedHeaders value names `name` (lower case), without splitting it into strings.
bool SignsHeader(std::string_view signed_headers, std::string_view name) {
  while (!signed_headers.empty()) {
    size_t semi = signed_headers.find(';');
    if (AsciiIEquals(Trim(signed_headers.substr(0, semi)), name)) return true;
    if (semi == std::string_view::npos) break;
    signed_headers.remove_prefix(semi + 1);
  }
  return false;
}

// The fields both forms provide, once parsed. Views point into the request's Authorization
// header or into the decoded query parameters, which outlive it.
struct Parsed {
  std::string_view algorithm;
  std::string_view credential;
  std::string_view signed_headers;  // the raw SignedHeaders value
  std::string_view signature;
  std::string_view amz_date_sent;  // X-Amz-Date as sent, if sent
  std::string amz_date_made;       // else made from the Date header
  int64_t date_s = 0;
  bool presigned = false;

  // The date for the string to sign.
  std::string_view amz_date() const {
    return amz_date_made.empty() ? amz_date_sent : std::string_view(amz_date_made);
  }
};

// key id, date, region, service, terminator
using CredentialScope = std::array<std::string_view, 5>;

Result<CredentialScope> SplitCredential(std::string_view credential) {
  while (!credential.empty() && credential.back() == '/') credential.remove_suffix(1);
  CredentialScope parts;
  size_t n = 0;
  std::string_view rest = credential;
  while (true) {
    size_t slash = rest.find('/');
    if (n < parts.size()) parts[n] = rest.substr(0, slash);
    ++n;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  if (n != parts.size()) {
    return Incomplete(
        "Credential must have exactly 5 slash-delimited elements, e.g. "
        "keyid/date/region/service/term, got '" +
        std::string(credential) + "'");
  }
  return parts;
}

Result<int64_t> ParseRequestDate(std::string_view value, bool allow_http_date) {
  if (auto t = ParseAmzDate(value)) return *t;
  if (allow_http_date) {
    if (auto t = ParseHttpDate(value)) return *t;
  }
  return Incomplete("Date must be in ISO-8601 'basic format'. Got '" + std::string(value) +
                    "'. See http://en.wikipedia.org/wiki/ISO_8601");
}

Result<Parsed> ParseHeaderForm(const SignedRequest& request, std::string_view auth) {
  Parsed p;
  std::string_view trimmed = Trim(auth);
  size_t space = trimmed.find(' ');
  p.algorithm = trimmed.substr(0, space);
  std::string_view rest =
      space == std::string_view::npos ? std::string_view() : trimmed.substr(space + 1);
  bool have_credential = false, have_signature = false, have_signed_headers = false;
  while (!rest.empty()) {
    // Parameters are separated by commas, or by spaces alone ("Credential=.. SignedHeaders=..
    // Signature=.."): a part holding several '=' is split at its first space.
    size_t end = rest.find(',');
    std::string_view part = Trim(rest.substr(0, end));
    if (std::count(part.begin(), part.end(), '=') > 1) {
      if (size_t space = part.find_first_of(" \t"); space != std::string_view::npos) {
        end = static_cast<size_t>(part.data() + space - rest.data());
        part = Trim(part.substr(0, space));
      }
    }
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Incomplete("'" + std::string(part) +
                        "' not a valid key=value pair (missing equal-sign) in Authorization "
                        "header: '" +
                        std::string(auth) + "'.");
    }
    std::string_view key = Trim(part.substr(0, eq));
    std::string_view value = Trim(part.substr(eq + 1));
    if (key == "Credential") {
      p.credential = value;
      have_credential = !value.empty();
    } else if (key == "Signature") {
      p.signature = value;
      have_signature = !value.empty();
    } else if (key == "SignedHeaders") {
      p.signed_headers = value;
      have_signed_headers = !value.empty();
    }
  }
  const std::string_view* amz_date = FindHeader(request, "x-amz-date");
  const std::string_view* date = amz_date ? amz_date : FindHeader(request, "date");
  std::string message;
  if (!have_credential) message += "Authorization header requires 'Credential' parameter. ";
  if (!have_signature) message += "Authorization header requires 'Signature' parameter. ";
  if (!have_signed_headers) message += "Authorization header requires 'SignedHeaders' parameter. ";
  if (date == nullptr) {
    message +=
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ";
  }
  if (!message.empty()) return Incomplete(message + "Authorization=" + std::string(auth));
  FDYNO_ASSIGN_OR_RETURN(p.date_s, ParseRequestDate(*date, amz_date == nullptr));
  if (amz_date != nullptr) {
    p.amz_date_sent = *amz_date;
  } else {
    p.amz_date_made = AmzDate(p.date_s * 1000);
  }
  return p;
}

// The header-form request time (X-Amz-Date, else Date) against now; Ok when there is none or
// it does not parse (the parser reports that).
Status CheckRequestTime(const SignedRequest& request, const VerifyOptions& options) {
  const std::string_view* amz_date = FindHeader(request, "x-amz-date");
  const std::string_view* date = amz_date ? amz_date : FindHeader(request, "date");
  if (date == nullptr) return Status::Ok();
  Result<int64_t> date_s = ParseRequestDate(*date, amz_date == nullptr);
  if (!date_s.ok()) return Status::Ok();
  return CheckTime(*date_s, options);
}

Result<Parsed> ParseQueryForm(const std::vector<std::pair<std::string, std::string>>& params) {
  Parsed p;
  p.presigned = true;
  std::string message;
  const std::string* algorithm = FindParam(params, "X-Amz-Algorithm");
  const std::string* credential = FindParam(params, "X-Amz-Credential");
  const std::string* signature = FindParam(params, "X-Amz-Signature");
  const std::string* signed_headers = FindParam(params, "X-Amz-SignedHeaders");
  const std::string* date = FindParam(params, "X-Amz-Date");
  for (auto [value, name] :
       {std::pair{algorithm, "X-Amz-Algorithm"}, std::pair{credential, "X-Amz-Credential"},
        std::pair{signature, "X-Amz-Signature"}, std::pair{signed_headers, "X-Amz-SignedHeaders"},
        std::pair{date, "X-Amz-Date"}}) {
    if (value == nullptr || value->empty()) {
      message += std::string("AWS query-string parameters must include '") + name + "'. ";
    }
  }
  if (!message.empty()) return Incomplete(message + "Re-examine the query-string parameters.");
  p.algorithm = *algorithm;
  p.credential = *credential;
  p.signature = *signature;
  p.signed_headers = *signed_headers;
  p.amz_date_sent = *date;
  FDYNO_ASSIGN_OR_RETURN(p.date_s, ParseRequestDate(*date, false));
  return p;
}

// OpenSSL 3 looks an algorithm up in its provider tables, under a lock, each time it is named
// through EVP_sha256() or HMAC(), and allocates a context per call. Algorithms fetched once
// and a context per thread avoid both; the one-shot calls stay as the fallback should a fetch
// fail. (The lookups, locks and allocations were a large share of the load generator's CPU,
// which signs every request, and a server with credentials pays the same per request:
// bench/README.md, "Figures behind settings in the code".)
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// A SHA-256 context of this thread, initialized with the fetched digest; null if unavailable.
EVP_MD_CTX* Sha256Context() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local const std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx = [] {
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> c(EVP_MD_CTX_new());
    if (md == nullptr || c == nullptr || EVP_DigestInit_ex2(c.get(), md, nullptr) != 1) {
      c.reset();
    }
    return c;
  }();
  return ctx.get();
}

// An HMAC context of this thread with its digest set to SHA-256; null if unavailable.
EVP_MAC_CTX* HmacSha256Context() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  thread_local const std::unique_ptr<EVP_MAC_CTX, MacCtxFree> ctx = [] {
    std::unique_ptr<EVP_MAC_CTX, MacCtxFree> c(mac ? EVP_MAC_CTX_new(mac) : nullptr);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                           OSSL_PARAM_construct_end()};
    if (c != nullptr && EVP_MAC_CTX_set_params(c.get(), params) != 1) c.reset();
    return c;
  }();
  return ctx.get();
}

// Signing keys are derived per (secret, date, region, service); cache the last one per thread
// so steady traffic pays two HMACs per request instead of six.
const std::string& CachedSigningKey(std::string_view secret, std::string_view date,
                                    std::string_view region, std::string_view service) {
  struct Entry {
    std::string secret, date, region, service, key;
  };
  thread_local Entry entry;
  if (entry.key.empty() || entry.secret != secret || entry.date != date || entry.region != region ||
      entry.service != service) {
    entry = {std::string(secret), std::string(date), std::string(region), std::string(service),
             SigningKey(secret, date, region, service)};
  }
  return entry.key;
}

}  // namespace

// ---- CredentialStore ----

Result<CredentialStore> CredentialStore::Parse(std::string_view text,
                                               std::string_view source_name) {
  CredentialStore store;
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::istringstream in{std::string(line)};
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    if (fields.empty()) continue;
    std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    if (fields.size() != 3) {
      return Error::Validation(where +
                               ": expected ACCESS_KEY_ID SECRET_ACCESS_KEY ACCOUNT_ID, got " +
                               std::to_string(fields.size()) + " fields");
    }
    if (fields[2].size() != 12 || !std::all_of(fields[2].begin(), fields[2].end(),
                                               [](char c) { return c >= '0' && c <= '9'; })) {
      return Error::Validation(where + ": account id must be 12 digits");
    }
    if (store.Find(fields[0]) != nullptr) {
      return Error::Validation(where + ": duplicate access key id " + fields[0]);
    }
    store.Add({fields[0], fields[1], fields[2]});
  }
  return store;
}

Result<CredentialStore> CredentialStore::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Validation("cannot read credentials file " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return Parse(buffer.str(), path);
}

std::string LocalAccount(std::string_view access_key_id, std::string_view region) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(access_key_id);
  mix("\n");
  mix(region);
  uint64_t n = h % 1'000'000'000'000ull;
  std::string account = std::to_string(n);
  account.insert(0, 12 - account.size(), '0');
  return account == kOpenModeAccount ? std::string("000000000002") : account;
}

void CredentialStore::Add(Credential credential) {
  if (first_account_.empty()) first_account_ = credential.account_id;
  std::string key = credential.access_key_id;
  by_key_.insert_or_assign(std::move(key), std::move(credential));
}

const Credential* CredentialStore::Find(std::string_view access_key_id) const {
  auto it = by_key_.find(access_key_id);
  return it == by_key_.end() ? nullptr : &it->second;
}

// ---- Building blocks ----

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 15];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = Sha256Context();
  if (ctx == nullptr || EVP_DigestInit_ex2(ctx, nullptr, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, md, &len) != 1) {
    EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  size_t len = 0;
  EVP_MAC_CTX* ctx = HmacSha256Context();
  if (ctx == nullptr ||
      EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), nullptr) !=
          1 ||
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
      EVP_MAC_final(ctx, md, &len, sizeof md) != 1) {
    unsigned int one_shot_len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &one_shot_len);
    len = one_shot_len;
  }
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k = HmacSha256("AWS4" + std::string(secret), date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, kTerminator);
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string UriDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string CanonicalRequest(const SignedRequest& request,
                             const std::vector<std::string>& signed_headers,
                             std::string_view payload_hash, std::string_view exclude_query,
                             bool s3_path) {
  auto [path, query] = SplitTarget(request.target);
  std::string out;
  out.reserve(256 + request.target.size());
  out.append(request.method);
  out.push_back('\n');
  if (path.empty()) {
    out.push_back('/');
  } else {
    out.append(s3_path ? UriEncode(UriDecode(path), /*keep_slash=*/true)
                       : UriEncode(path, /*keep_slash=*/true));
  }
  out.push_back('\n');

  std::vector<std::pair<std::string, std::string>> params;
  for (auto& [k, v] : ParseQuery(query)) {
    if (!exclude_query.empty() && k == exclude_query) continue;
    params.emplace_back(UriEncode(k, false), UriEncode(v, false));
  }
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) out.push_back('&');
    out.append(params[i].first);
    out.push_back('=');
    out.append(params[i].second);
  }
  out.push_back('\n');

  for (const std::string& name : signed_headers) {
    out.append(name);
    out.push_back(':');
    bool first = true;
    for (const auto& [k, v] : request.headers) {
      if (!AsciiIEquals(k, name)) continue;
      if (!first) out.push_back(',');
      first = false;
      AppendCanonicalValue(out, v);
    }
    out.push_back('\n');
  }
  out.push_back('\n');
  for (size_t i = 0; i < signed_headers.size(); ++i) {
    if (i) out.push_back(';');
    out.append(signed_headers[i]);
  }
  out.push_back('\n');
  out.append(payload_hash);
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string out;
  out.reserve(160);
  out.append(kAlgorithm);
  out.push_back('\n');
  out.append(amz_date);
  out.push_back('\n');
  out.append(scope);
  out.push_back('\n');
  out.append(Sha256Hex(canonical_request));
  return out;
}

std::string AmzDate(int64_t epoch_ms) {
  std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::optional<int64_t> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  auto num = [&](size_t pos, size_t len) -> int {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  int year = num(0, 4), month = num(4, 2), day = num(6, 2);
  int hour = num(9, 2), minute = num(11, 2), second = num(13, 2);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm));
}

std::vector<std::pair<std::string, std::string>> SignHeaders(const SignedRequest& request,
                                                             const SigningParams& params) {
  std::string amz_date = AmzDate(params.now_ms);
  SignedRequest r = request;
  r.headers.emplace_back("x-amz-date", amz_date);
  std::vector<std::string> names;
  for (const auto& [k, v] : r.headers) names.push_back(AsciiLowered(k));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string date = amz_date.substr(0, 8);
  std::string scope = date + "/" + params.region + "/" + params.service + "/aws4_request";
  std::string canonical = CanonicalRequest(r, names, Sha256Hex(request.body));
  std::string signature = HexEncode(
      HmacSha256(CachedSigningKey(params.secret_access_key, date, params.region, params.service),
                 StringToSign(amz_date, scope, canonical)));
  std::string signed_headers;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) signed_headers.push_back(';');
    signed_headers += names[i];
  }
  return {{"X-Amz-Date", amz_date},
          {"Authorization", std::string(kAlgorithm) + " Credential=" + params.access_key_id + "/" +
                                scope + ", SignedHeaders=" + signed_headers +
                                ", Signature=" + signature}};
}

// ---- Verification ----

Result<Identity> Verify(const SignedRequest& request, const CredentialStore& store,
                        const VerifyOptions& options) {
  const std::string_view* auth = FindHeader(request, "authorization");
  auto [path, query] = SplitTarget(request.target);
  std::vector<std::pair<std::string, std::string>> params;
  if (query.find("X-Amz-") != std::string_view::npos) params = ParseQuery(query);
  bool query_form = FindParam(params, "X-Amz-Algorithm") != nullptr;
  if (auth != nullptr && query_form) {
    return Invalid(
        "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP "
        "header.");
  }
  if (auth == nullptr && !query_form) return Missing();
  if (auth != nullptr && Trim(*auth).substr(0, 5) != "AWS4-") return Missing();

  const bool open = store.empty();
  Parsed p;
  if (query_form) {
    FDYNO_ASSIGN_OR_RETURN(p, ParseQueryForm(params));
  } else {
    Result<Parsed> parsed = ParseHeaderForm(request, *auth);
    if (!parsed.ok()) {
      // An incomplete Authorization header (one without commas, say) is still checked for
      // expiry first: DynamoDB answers "Signature expired" before IncompleteSignature.
      if (!open) FDYNO_RETURN_IF_ERROR(CheckRequestTime(request, options));
      return std::move(parsed).error();
    }
    p = std::move(parsed).value();
  }

  if (!SignsHeader(p.signed_headers, "host")) {
    return Invalid("'Host' must be a 'SignedHeader' in the AWS Authorization.");
  }
  if (p.algorithm != kAlgorithm) {
    return Incomplete("Unsupported AWS 'algorithm': '" + std::string(p.algorithm) +
                      "' (only AWS4-HMAC-SHA256 for now). ");
  }
  FDYNO_ASSIGN_OR_RETURN(CredentialScope scope, SplitCredential(p.credential));
  if (open) {
    // DynamoDB Local's behaviour: a well-formed signature from anyone is accepted.
    return Identity{std::string(scope[0]), std::string(kDefaultAccount), std::string(scope[2])};
  }

  if (p.presigned) {
    const std::string* expires = FindParam(params, "X-Amz-Expires");
    int64_t expires_s = 0;
    if (expires != nullptr) {
      auto [ptr, ec] =
          std::from_chars(expires->data(), expires->data() + expires->size(), expires_s);
      if (ec != std::errc() || ptr != expires->data() + expires->size() || expires_s < 1 ||
          expires_s > 604800) {
        return Incomplete("X-Amz-Expires must be a number of seconds from 1 to 604800, got '" +
                          *expires + "'.");
      }
    }
    // A presigned request is valid from its date until date + X-Amz-Expires.
    int64_t now_s = options.now_ms / 1000;
    if (expires != nullptr && now_s > p.date_s + expires_s) {
      return Invalid("Signature expired: " + std::string(p.amz_date()) + " is now earlier than " +
                     AmzDate((now_s - expires_s) * 1000) + " (" + AmzDate(options.now_ms) + " - " +
                     std::to_string(expires_s) + " sec.)");
    }
    if (expires == nullptr || p.date_s * 1000 > options.now_ms) {
      FDYNO_RETURN_IF_ERROR(CheckTime(p.date_s, options));
    }
  } else {
    FDYNO_RETURN_IF_ERROR(CheckTime(p.date_s, options));
  }

  std::string scope_errors;
  // One endpoint serves every region: a signature for any of AWS's regions, or for the
  // server's own (--region, which may be a name of the user's), is one of its requests.
  if (scope[2] != options.region && !IsAwsRegion(scope[2])) {
    scope_errors +=
        "Credential should be scoped to a valid region, not '" + std::string(scope[2]) + "'. ";
  }
  if (scope[3] != options.service) {
    scope_errors += "Credential should be scoped to correct service: '" + options.service + "'. ";
  }
  if (scope[4] != kTerminator) {
    scope_errors += "Credential should be scoped with a valid terminator: 'aws4_request', not '" +
                    std::string(scope[4]) + "'. ";
  }
  std::string http_date(p.amz_date().substr(0, 8));
  if (scope[1] != http_date) {
    scope_errors +=
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from "
        "HTTP: '" +
        std::string(scope[1]) + "' != '" + http_date + "', from '" + std::string(p.amz_date()) +
        "'.";
  }
  if (!scope_errors.empty()) {
    while (!scope_errors.empty() && scope_errors.back() == ' ') scope_errors.pop_back();
    return Invalid(scope_errors);
  }

  const Credential* credential = store.Find(scope[0]);
  if (credential == nullptr) {
    return Error::Make(ErrorType::kUnrecognizedClient,
                       "The security token included in the request is invalid.");
  }
  if (FindHeader(request, "x-amz-security-token") != nullptr ||
      FindParam(params, "X-Amz-Security-Token") != nullptr) {
    // Keys in the credentials file are long-term keys; no session token belongs to them.
    return Error::Make(ErrorType::kUnrecognizedClient,
                       "The security token included in the request is invalid");
  }

  // The payload hash: X-Amz-Content-Sha256 when sent (it must match the body, except that a
  // presigned request may declare UNSIGNED-PAYLOAD), else the hash of the body as received.
  std::string payload_hash;
  if (const std::string_view* h = FindHeader(request, "x-amz-content-sha256")) {
    std::string_view claimed = Trim(*h);
    const bool unsigned_payload = (p.presigned || options.s3) && claimed == kUnsignedPayload;
    const bool streaming = options.s3 && claimed.starts_with("STREAMING-");
    if (!unsigned_payload && !streaming && !AsciiIEquals(claimed, Sha256Hex(request.body))) {
      return Invalid(std::string(kSignatureMismatch));
    }
    payload_hash = std::string(claimed);
  } else if (options.s3 && p.presigned) {
    payload_hash = std::string(kUnsignedPayload);
  } else {
    payload_hash = Sha256Hex(request.body);
  }

  std::string canonical =
      CanonicalRequest(request, SplitSignedHeaders(p.signed_headers), payload_hash,
                       p.presigned ? "X-Amz-Signature" : "", /*s3_path=*/options.s3);
  std::string credential_scope = std::string(scope[1]) + "/" + std::string(scope[2]) + "/" +
                                 std::string(scope[3]) + "/" + std::string(scope[4]);
  std::string string_to_sign = StringToSign(p.amz_date(), credential_scope, canonical);
  std::string expected = HexEncode(
      HmacSha256(CachedSigningKey(credential->secret_access_key, scope[1], scope[2], scope[3]),
                 string_to_sign));
  if (expected.size() != p.signature.size() ||
      CRYPTO_memcmp(expected.data(), p.signature.data(), expected.size()) != 0) {
    return Invalid(std::string(kSignatureMismatch) +
                   "\n\nThe Canonical String for this request should have been\n'" + canonical +
                   "'\n\nThe String-to-Sign should have been\n'" + string_to_sign + "'\n");
  }
  return Identity{credential->access_key_id, credential->account_id, std::string(scope[2])};
}

}  // namespace fdyno::http
