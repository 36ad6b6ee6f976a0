#include "http/compression.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "http/ascii.h"

namespace fdyno::http {
namespace {

Error TooLarge(size_t max_bytes) {
  return Error::Make(ErrorType::kRequestEntityTooLarge,
                     "Request body after decompression exceeds the maximum of " +
                         std::to_string(max_bytes) + " bytes");
}

// A body that fails to decompress is answered with HTTP 500, as DynamoDB answers it.
Error Corrupt(std::string_view what) {
  return Error::Internal("Content-Encoding " + std::string(what) +
                         ": invalid or truncated compressed data");
}

enum class InflateOutcome { kOk, kTooLarge, kCorrupt };

// Inflates with the given zlib window bits into *out, never letting *out exceed max_bytes + 1.
// With `members`, input that continues after the end of a stream is another stream (gzip
// members, RFC 1952 2.2) whose output follows.
InflateOutcome Inflate(std::string_view input, int window_bits, size_t max_bytes, std::string& out,
                       bool members = false) {
  z_stream zs{};
  if (inflateInit2(&zs, window_bits) != Z_OK) return InflateOutcome::kCorrupt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  out.clear();
  InflateOutcome outcome = InflateOutcome::kCorrupt;
  // Grow geometrically, but the buffer never exceeds max_bytes + 1: one byte past the bound
  // proves the body is too large without inflating any further.
  const size_t hard_cap = max_bytes + 1;
  size_t capacity = std::min<size_t>(std::max<size_t>(input.size() * 4, 64 * 1024), hard_cap);
  while (true) {
    if (out.size() == capacity) {
      if (capacity == hard_cap) {
        outcome = InflateOutcome::kTooLarge;
        break;
      }
      capacity = std::min(capacity * 2, hard_cap);
    }
    size_t used = out.size();
    out.resize(capacity);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    zs.avail_out = static_cast<uInt>(capacity - used);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(capacity - zs.avail_out);
    if (rc == Z_STREAM_END && members && zs.avail_in > 0) {
      if (inflateReset(&zs) != Z_OK) break;
      continue;
    }
    if (rc == Z_STREAM_END) {
      outcome = zs.avail_in == 0 ? InflateOutcome::kOk : InflateOutcome::kCorrupt;
      if (out.size() > max_bytes) outcome = InflateOutcome::kTooLarge;
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_out != 0) break;  // input ended early: truncated
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
  }
  inflateEnd(&zs);
  if (outcome != InflateOutcome::kOk) out.clear();
  return outcome;
}

}  // namespace

std::optional<ContentEncoding> ParseContentEncoding(std::string_view header) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t'))
    header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t'))
    header.remove_suffix(1);
  if (header.empty() || AsciiIEquals(header, "identity")) return ContentEncoding::kIdentity;
  if (AsciiIEquals(header, "gzip") || AsciiIEquals(header, "x-gzip")) return ContentEncoding::kGzip;
  if (AsciiIEquals(header, "deflate")) return ContentEncoding::kDeflate;
  return std::nullopt;
}

Result<std::string> Decompress(std::string_view input, ContentEncoding encoding, size_t max_bytes) {
  std::string out;
  switch (encoding) {
    case ContentEncoding::kIdentity:
      if (input.size() > max_bytes) return TooLarge(max_bytes);
      return std::string(input);
    case ContentEncoding::kGzip:
      switch (Inflate(input, 16 + MAX_WBITS, max_bytes, out, /*members=*/true)) {
        case InflateOutcome::kOk:
          return out;
        case InflateOutcome::kTooLarge:
          return TooLarge(max_bytes);
        case InflateOutcome::kCorrupt:
          return Corrupt("gzip");
      }
      break;
    case ContentEncoding::kDeflate: {
      InflateOutcome outcome = Inflate(input, MAX_WBITS, max_bytes, out);
      if (outcome == InflateOutcome::kCorrupt) outcome = Inflate(input, -MAX_WBITS, max_bytes, out);
      switch (outcome) {
        case InflateOutcome::kOk:
          return out;
        case InflateOutcome::kTooLarge:
          return TooLarge(max_bytes);
        case InflateOutcome::kCorrupt:
          return Corrupt("deflate");
      }
      break;
    }
  }
  return Corrupt("unknown");
}

std::string Compress(std::string_view input, ContentEncoding encoding) {
  if (encoding == ContentEncoding::kIdentity) return std::string(input);
  z_stream zs{};
  int window_bits = encoding == ContentEncoding::kGzip ? 16 + MAX_WBITS : MAX_WBITS;
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, input.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace fdyno::http
