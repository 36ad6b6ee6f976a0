#include "http/compression.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <optional>

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

std::string Compress(std::string_view input, ContentEncoding encoding, int level) {
  if (encoding == ContentEncoding::kIdentity) return std::string(input);
  z_stream zs{};
  int window_bits = encoding == ContentEncoding::kGzip ? 16 + MAX_WBITS : MAX_WBITS;
  deflateInit2(&zs, std::clamp(level, 1, 9), Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
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

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A quality value ("1", "0.5", "0.001"); values above 1 count as 1. nullopt when malformed.
std::optional<double> ParseQuality(std::string_view text) {
  text = Trim(text);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  double value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    value = value * 10 + (text[i] - '0');
  }
  if (i < text.size() && text[i] == '.') {
    double scale = 0.1;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      value += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (i != text.size()) return std::nullopt;
  return std::min(value, 1.0);
}

struct Offer {
  double quality = -1;  // -1: not mentioned
  size_t position = 0;  // order of first mention
};

}  // namespace

std::optional<ContentEncoding> ChooseResponseEncoding(std::string_view header) {
  Offer gzip, deflate, any;
  size_t position = 0;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view entry = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    size_t semi = entry.find(';');
    std::string_view coding = Trim(entry.substr(0, semi));
    double quality = 1;
    // Parameters: the first well-formed "q=" counts; "q =0" (a space before '=') and
    // malformed values are ignored, a negative value refuses the coding, as DynamoDB does.
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : entry.substr(semi + 1);
    while (!params.empty()) {
      size_t next = params.find(';');
      std::string_view param = Trim(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      if (param.size() < 2 || AsciiLower(param[0]) != 'q' || param[1] != '=') continue;
      std::string_view value = Trim(param.substr(2));
      const bool negative = !value.empty() && value.front() == '-';
      std::optional<double> q = ParseQuality(negative ? value.substr(1) : value);
      if (!q) continue;
      quality = negative ? 0 : *q;
      break;
    }
    Offer* offer = nullptr;
    if (AsciiIEquals(coding, "gzip")) {
      offer = &gzip;
    } else if (AsciiIEquals(coding, "deflate")) {
      offer = &deflate;
    } else if (coding == "*") {
      offer = &any;
    } else {
      continue;
    }
    ++position;
    if (offer->quality < 0) offer->position = position;
    offer->quality = std::max(offer->quality, quality);
  }
  // A coding not named takes the quality of "*" and comes after every named one.
  for (Offer* offer : {&gzip, &deflate}) {
    if (offer->quality < 0 && any.quality >= 0) {
      offer->quality = any.quality;
      offer->position = 1000 + (offer == &deflate ? 1 : 0);
    }
  }
  const bool gzip_ok = gzip.quality > 0, deflate_ok = deflate.quality > 0;
  if (!gzip_ok && !deflate_ok) return std::nullopt;
  if (gzip_ok && deflate_ok) {
    if (gzip.quality != deflate.quality) {
      return gzip.quality > deflate.quality ? ContentEncoding::kGzip : ContentEncoding::kDeflate;
    }
    return gzip.position < deflate.position ? ContentEncoding::kGzip : ContentEncoding::kDeflate;
  }
  return gzip_ok ? ContentEncoding::kGzip : ContentEncoding::kDeflate;
}

std::string_view EncodingName(ContentEncoding encoding) {
  switch (encoding) {
    case ContentEncoding::kGzip:
      return "gzip";
    case ContentEncoding::kDeflate:
      return "deflate";
    case ContentEncoding::kIdentity:
      break;
  }
  return {};
}

}  // namespace fdyno::http
