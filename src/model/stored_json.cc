#include "model/stored_json.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "model/attribute_value.h"
#include "model/base64.h"
#include "model/item_reader.h"
#include "model/item_size.h"
#include "model/number.h"

namespace fdyno::model {
namespace {

// RapidJSON Writer's escapes for UTF-8 output: control characters as \b \t \n \f \r or
// \u00XX (upper-case hex), '"' and '\\'; every other byte as it is.
constexpr char kHex[] = "0123456789ABCDEF";

constexpr char EscapeOf(unsigned char c) {
  switch (c) {
    case '\b':
      return 'b';
    case '\t':
      return 't';
    case '\n':
      return 'n';
    case '\f':
      return 'f';
    case '\r':
      return 'r';
    case '"':
      return '"';
    case '\\':
      return '\\';
    default:
      return c < 0x20 ? 'u' : 0;
  }
}

// Whether any of 8 bytes needs an escape: one below 0x20, a '"' or a '\\' (exact for "any").
bool AnyEscape8(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  const uint64_t below_space = (x - kOnes * 0x20) & ~x & kHigh;
  const uint64_t q = x ^ (kOnes * '"'), b = x ^ (kOnes * '\\');
  return (below_space | ((q - kOnes) & ~q & kHigh) | ((b - kOnes) & ~b & kHigh)) != 0;
}

// Where the transcoder writes: the JSON into a RapidJSON buffer, or nowhere (only the size).
class JsonOut {
 public:
  static constexpr bool kWrites = true;
  explicit JsonOut(rapidjson::StringBuffer& b) : b_(b) {}
  void Put(char c) { b_.Put(c); }
  void Append(std::string_view s) {
    if (!s.empty()) std::memcpy(b_.Push(s.size()), s.data(), s.size());
  }

 private:
  rapidjson::StringBuffer& b_;
};

class NoOut {
 public:
  static constexpr bool kWrites = false;
  void Put(char) {}
  void Append(std::string_view) {}
};

template <class Out>
class Transcoder {
 public:
  Transcoder(std::string_view in, Out out) : r_(in), out_(out) {}

  Result<uint64_t> WholeItem() {
    FDYNO_RETURN_IF_ERROR(r_.CheckVersion());
    size_t n = 0;
    FDYNO_ASSIGN_OR_RETURN(uint64_t size, Map(0, &n));
    if (!r_.done()) return Corrupt("trailing bytes");
    return size;
  }

 private:
  void Raw(std::string_view s) { out_.Append(s); }

  void Str(std::string_view s) {
    if constexpr (!Out::kWrites) return;
    out_.Put('"');
    size_t done = 0, i = 0;
    while (i < s.size()) {
      if (i + 8 <= s.size()) {
        uint64_t x;
        std::memcpy(&x, s.data() + i, 8);
        if (!AnyEscape8(x)) {
          i += 8;
          continue;
        }
      }
      const auto c = static_cast<unsigned char>(s[i]);
      const char e = EscapeOf(c);
      if (e != 0) {
        Raw(s.substr(done, i - done));
        out_.Put('\\');
        out_.Put(e);
        if (e == 'u') {
          Raw("00");
          out_.Put(kHex[c >> 4]);
          out_.Put(kHex[c & 15]);
        }
        done = i + 1;
      }
      ++i;
    }
    Raw(s.substr(done));
    out_.Put('"');
  }

  void Base64(std::string_view bytes) {
    if constexpr (!Out::kWrites) return;
    scratch_.clear();
    Base64EncodeTo(bytes, &scratch_);
    out_.Put('"');
    Raw(scratch_);  // the base64 alphabet needs no escapes
    out_.Put('"');
  }

  // A map's entries as a JSON object: the sum of their names' and values' sizes; *n entries.
  Result<uint64_t> Map(int depth, size_t* n) {
    FDYNO_ASSIGN_OR_RETURN(*n, r_.Count(2));
    out_.Put('{');
    uint64_t size = 0;
    std::string_view previous;
    for (size_t i = 0; i < *n; ++i) {
      FDYNO_ASSIGN_OR_RETURN(std::string_view name, r_.Bytes());
      // Names are written in sorted order; anything else is not our encoding.
      if (i > 0 && !(previous < name)) return Corrupt("map names out of order");
      previous = name;
      if (i > 0) out_.Put(',');
      Str(name);
      out_.Put(':');
      FDYNO_ASSIGN_OR_RETURN(uint64_t value_size, Value(depth));
      size += name.size() + value_size;
    }
    out_.Put('}');
    return size;
  }

  // One value as {"T":...}; its size.
  Result<uint64_t> Value(int depth) {
    if (depth > kMaxDecodeDepth) return Corrupt("nesting too deep");
    FDYNO_ASSIGN_OR_RETURN(uint8_t tag, r_.Byte());
    const Type type = static_cast<Type>(tag);
    if (tag > static_cast<uint8_t>(Type::kBS)) {
      return Corrupt("unknown type tag " + std::to_string(tag));
    }
    out_.Put('{');
    Str(TypeName(type));
    out_.Put(':');
    uint64_t size = 0;
    switch (type) {
      case Type::kS: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
        Str(s);
        size = s.size();
        break;
      }
      case Type::kN: {
        FDYNO_ASSIGN_OR_RETURN(size, NumberValue());
        break;
      }
      case Type::kB: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
        Base64(s);
        size = s.size();
        break;
      }
      case Type::kBool: {
        FDYNO_ASSIGN_OR_RETURN(uint8_t b, r_.Byte());
        if (b > 1) return Corrupt("bool");
        Raw(b == 1 ? "true" : "false");
        size = 1;
        break;
      }
      case Type::kNull:
        Raw("true");
        size = 1;
        break;
      case Type::kM: {
        size_t n = 0;
        FDYNO_ASSIGN_OR_RETURN(uint64_t entries, Map(depth + 1, &n));
        size = 3 + n + entries;
        break;
      }
      case Type::kL: {
        FDYNO_ASSIGN_OR_RETURN(size_t n, r_.Count(1));
        out_.Put('[');
        size = 3 + n;
        for (size_t i = 0; i < n; ++i) {
          if (i > 0) out_.Put(',');
          FDYNO_ASSIGN_OR_RETURN(uint64_t element, Value(depth + 1));
          size += element;
        }
        out_.Put(']');
        break;
      }
      case Type::kSS:
      case Type::kBS:
      case Type::kNS: {
        FDYNO_ASSIGN_OR_RETURN(size, Set(type));
        break;
      }
    }
    out_.Put('}');
    return size;
  }

  Result<uint64_t> NumberValue() {
    NumberParts n;
    FDYNO_RETURN_IF_ERROR(r_.ReadNumberParts(&n));
    if constexpr (Out::kWrites) {
      scratch_.clear();
      Number::AppendText(n.negative, n.digits_view(), n.exponent, &scratch_);
      out_.Put('"');
      Raw(scratch_);  // digits, '-', '.': no escapes
      out_.Put('"');
    }
    return NumberSize(n.negative, n.count, n.exponent);
  }

  // A set's members, in stored order. Equal members have equal encodings (strings and
  // binaries trivially, numbers because their encoding is canonical), so repeated members
  // are found by comparing the encoded bytes.
  Result<uint64_t> Set(Type type) {
    FDYNO_ASSIGN_OR_RETURN(size_t n, r_.Count(type == Type::kNS ? 3 : 1));
    if (n == 0) return Corrupt("empty set");
    members_.clear();
    out_.Put('[');
    uint64_t size = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out_.Put(',');
      if (type == Type::kNS) {
        const size_t start = r_.pos();
        FDYNO_ASSIGN_OR_RETURN(uint64_t member, NumberValue());
        size += member;
        members_.push_back(r_.input().substr(start, r_.pos() - start));
        continue;
      }
      FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
      if (type == Type::kSS) {
        Str(s);
      } else {
        Base64(s);
      }
      size += s.size();
      members_.push_back(s);
    }
    out_.Put(']');
    std::sort(members_.begin(), members_.end());
    if (std::adjacent_find(members_.begin(), members_.end()) != members_.end()) {
      return Corrupt("duplicate set member");
    }
    return size;
  }

  StoredReader r_;
  Out out_;
  std::string scratch_;                    // a number's text, a binary's base64
  std::vector<std::string_view> members_;  // the current set's members (sets do not nest)
};

}  // namespace

Result<uint64_t> WriteStoredItemJson(std::string_view stored, rapidjson::StringBuffer& out) {
  return Transcoder<JsonOut>(stored, JsonOut(out)).WholeItem();
}

Result<uint64_t> StoredItemSize(std::string_view stored) {
  return Transcoder<NoOut>(stored, NoOut()).WholeItem();
}

}  // namespace fdyno::model
