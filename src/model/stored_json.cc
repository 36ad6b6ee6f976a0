#include "model/stored_json.h"

#include <algorithm>
#include <string>
#include <vector>

#include "model/attribute_value.h"
#include "model/item_reader.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/number.h"

namespace fdyno::model {
namespace {

class Transcoder {
 public:
  Transcoder(std::string_view in, StringWriter& w) : r_(in), w_(w) {}

  Result<uint64_t> WholeItem() {
    FDYNO_RETURN_IF_ERROR(r_.CheckVersion());
    size_t n = 0;
    FDYNO_ASSIGN_OR_RETURN(uint64_t size, Map(0, &n));
    if (!r_.done()) return Corrupt("trailing bytes");
    return size;
  }

 private:
  // A map's entries as a JSON object: the sum of their names' and values' sizes; *n entries.
  Result<uint64_t> Map(int depth, size_t* n) {
    FDYNO_ASSIGN_OR_RETURN(*n, r_.Count(2));
    w_.StartObject();
    uint64_t size = 0;
    std::string_view previous;
    for (size_t i = 0; i < *n; ++i) {
      FDYNO_ASSIGN_OR_RETURN(std::string_view name, r_.Bytes());
      // Names are written in sorted order; anything else is not our encoding.
      if (i > 0 && !(previous < name)) return Corrupt("map names out of order");
      previous = name;
      json_internal::WriteString(w_, name);
      FDYNO_ASSIGN_OR_RETURN(uint64_t value_size, Value(depth));
      size += name.size() + value_size;
    }
    w_.EndObject();
    return size;
  }

  // One value as {"T": ...}; its size.
  Result<uint64_t> Value(int depth) {
    if (depth > kMaxDecodeDepth) return Corrupt("nesting too deep");
    FDYNO_ASSIGN_OR_RETURN(uint8_t tag, r_.Byte());
    const Type type = static_cast<Type>(tag);
    if (tag > static_cast<uint8_t>(Type::kBS)) {
      return Corrupt("unknown type tag " + std::to_string(tag));
    }
    w_.StartObject();
    json_internal::WriteString(w_, TypeName(type));
    uint64_t size = 0;
    switch (type) {
      case Type::kS: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
        json_internal::WriteString(w_, s);
        size = s.size();
        break;
      }
      case Type::kN: {
        FDYNO_ASSIGN_OR_RETURN(size, NumberValue());
        break;
      }
      case Type::kB: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
        json_internal::WriteBase64(w_, s);
        size = s.size();
        break;
      }
      case Type::kBool: {
        FDYNO_ASSIGN_OR_RETURN(uint8_t b, r_.Byte());
        if (b > 1) return Corrupt("bool");
        w_.Bool(b == 1);
        size = 1;
        break;
      }
      case Type::kNull:
        w_.Bool(true);
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
        w_.StartArray();
        size = 3 + n;
        for (size_t i = 0; i < n; ++i) {
          FDYNO_ASSIGN_OR_RETURN(uint64_t element, Value(depth + 1));
          size += element;
        }
        w_.EndArray();
        break;
      }
      case Type::kSS:
      case Type::kBS:
      case Type::kNS: {
        FDYNO_ASSIGN_OR_RETURN(size, Set(type));
        break;
      }
    }
    w_.EndObject();
    return size;
  }

  Result<uint64_t> NumberValue() {
    NumberParts n;
    FDYNO_RETURN_IF_ERROR(r_.ReadNumberParts(&n));
    text_.clear();
    Number::AppendText(n.negative, n.digits_view(), n.exponent, &text_);
    json_internal::WriteString(w_, text_);
    return NumberSize(n.negative, n.count, n.exponent);
  }

  // A set's members, in stored order. Equal members have equal encodings (strings and
  // binaries trivially, numbers because their encoding is canonical), so repeated members
  // are found by comparing the encoded bytes.
  Result<uint64_t> Set(Type type) {
    FDYNO_ASSIGN_OR_RETURN(size_t n, r_.Count(type == Type::kNS ? 3 : 1));
    if (n == 0) return Corrupt("empty set");
    members_.clear();
    w_.StartArray();
    uint64_t size = 0;
    for (size_t i = 0; i < n; ++i) {
      if (type == Type::kNS) {
        const size_t start = r_.pos();
        FDYNO_ASSIGN_OR_RETURN(uint64_t member, NumberValue());
        size += member;
        members_.push_back(r_.input().substr(start, r_.pos() - start));
        continue;
      }
      FDYNO_ASSIGN_OR_RETURN(std::string_view s, r_.Bytes());
      if (type == Type::kSS) {
        json_internal::WriteString(w_, s);
      } else {
        json_internal::WriteBase64(w_, s);
      }
      size += s.size();
      members_.push_back(s);
    }
    w_.EndArray();
    std::sort(members_.begin(), members_.end());
    if (std::adjacent_find(members_.begin(), members_.end()) != members_.end()) {
      return Corrupt("duplicate set member");
    }
    return size;
  }

  StoredReader r_;
  StringWriter& w_;
  std::string text_;                       // a number's text
  std::vector<std::string_view> members_;  // the current set's members (sets do not nest)
};

}  // namespace

Result<uint64_t> WriteStoredItemJson(std::string_view stored, StringWriter& w) {
  return Transcoder(stored, w).WholeItem();
}

}  // namespace fdyno::model
