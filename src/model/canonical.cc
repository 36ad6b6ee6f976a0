#include "model/canonical.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace fdyno::model {
namespace {

// Tags: persisted inside stored digests' inputs; never change or reuse.
enum Tag : uint8_t {
  kTagS = 0x01,
  kTagN = 0x02,
  kTagB = 0x03,
  kTagBool = 0x04,
  kTagNull = 0x05,
  kTagM = 0x06,
  kTagL = 0x07,
  kTagSS = 0x08,
  kTagNS = 0x09,
  kTagBS = 0x0a,
  kTagJsonNull = 0x20,
  kTagJsonFalse = 0x21,
  kTagJsonTrue = 0x22,
  kTagJsonNumber = 0x23,
  kTagJsonString = 0x24,
  kTagJsonArray = 0x25,
  kTagJsonObject = 0x26,
  kTagInt = 0x27,
};

void PutLength(uint64_t n, std::string* out) {
  // Fixed 8 bytes big-endian: simple and unambiguous.
  for (int shift = 56; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((n >> shift) & 0xff));
}

void PutBytes(std::string_view s, std::string* out) {
  PutLength(s.size(), out);
  out->append(s);
}

void PutNumberText(const Number& n, std::string* out) { PutBytes(n.ToString(), out); }

std::string_view Str(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

std::string JsonNumberText(const rapidjson::Value& v) {
  std::string text;
  if (v.IsInt64()) {
    text = std::to_string(v.GetInt64());
  } else if (v.IsUint64()) {
    text = std::to_string(v.GetUint64());
  } else {
    const double d = v.GetDouble();
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof(buf), d);  // shortest round-trip form
    text.assign(buf, res.ptr);
  }
  // Equal numbers written differently ("1", "1.0", "1e0") become one text where DynamoDB's
  // number type can hold them.
  auto n = Number::Parse(text);
  return n.ok() ? n->ToString() : text;
}

}  // namespace

void AppendCanonicalV1(const AttributeValue& value, std::string* out) {
  switch (value.type()) {
    case Type::kS:
      out->push_back(kTagS);
      PutBytes(std::get<std::string>(value.v), out);
      return;
    case Type::kN:
      out->push_back(kTagN);
      PutNumberText(std::get<Number>(value.v), out);
      return;
    case Type::kB:
      out->push_back(kTagB);
      PutBytes(std::get<Binary>(value.v).bytes, out);
      return;
    case Type::kBool:
      out->push_back(kTagBool);
      out->push_back(std::get<bool>(value.v) ? 1 : 0);
      return;
    case Type::kNull:
      out->push_back(kTagNull);
      return;
    case Type::kM:
      out->push_back(kTagM);
      // Map is ordered by std::string's bytewise order already.
      AppendCanonicalItemV1(std::get<Map>(value.v), out);
      return;
    case Type::kL: {
      const List& l = std::get<List>(value.v);
      out->push_back(kTagL);
      PutLength(l.size(), out);
      for (const auto& e : l) AppendCanonicalV1(e, out);
      return;
    }
    case Type::kSS:
    case Type::kBS: {
      std::vector<std::string_view> members;
      if (value.type() == Type::kSS) {
        for (const auto& m : std::get<StringSet>(value.v).members) members.emplace_back(m);
      } else {
        for (const auto& m : std::get<BinarySet>(value.v).members) members.emplace_back(m);
      }
      std::sort(members.begin(), members.end());
      out->push_back(value.type() == Type::kSS ? kTagSS : kTagBS);
      PutLength(members.size(), out);
      for (auto m : members) PutBytes(m, out);
      return;
    }
    case Type::kNS: {
      std::vector<const Number*> members;
      for (const auto& m : std::get<NumberSet>(value.v).members) members.push_back(&m);
      std::sort(members.begin(), members.end(),
                [](const Number* a, const Number* b) { return a->Compare(*b) < 0; });
      out->push_back(kTagNS);
      PutLength(members.size(), out);
      for (const Number* m : members) PutNumberText(*m, out);
      return;
    }
  }
}

void AppendCanonicalItemV1(const Item& item, std::string* out) {
  PutLength(item.size(), out);
  for (const auto& [name, v] : item) {
    PutBytes(name, out);
    AppendCanonicalV1(v, out);
  }
}

void AppendCanonicalJsonV1(const rapidjson::Value& value, std::string* out) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out->push_back(kTagJsonNull);
      return;
    case rapidjson::kFalseType:
      out->push_back(kTagJsonFalse);
      return;
    case rapidjson::kTrueType:
      out->push_back(kTagJsonTrue);
      return;
    case rapidjson::kNumberType:
      out->push_back(kTagJsonNumber);
      PutBytes(JsonNumberText(value), out);
      return;
    case rapidjson::kStringType:
      out->push_back(kTagJsonString);
      PutBytes(Str(value), out);
      return;
    case rapidjson::kArrayType:
      out->push_back(kTagJsonArray);
      PutLength(value.Size(), out);
      for (const auto& e : value.GetArray()) AppendCanonicalJsonV1(e, out);
      return;
    case rapidjson::kObjectType: {
      std::vector<const rapidjson::Value::Member*> members;
      members.reserve(value.MemberCount());
      for (const auto& m : value.GetObject()) members.push_back(&m);
      std::stable_sort(members.begin(), members.end(),
                       [](const auto* a, const auto* b) { return Str(a->name) < Str(b->name); });
      out->push_back(kTagJsonObject);
      PutLength(members.size(), out);
      for (const auto* m : members) {
        PutBytes(Str(m->name), out);
        AppendCanonicalJsonV1(m->value, out);
      }
      return;
    }
  }
}

void AppendCanonicalStringV1(std::string_view s, std::string* out) {
  out->push_back(kTagJsonString);
  PutBytes(s, out);
}

void AppendCanonicalIntV1(int64_t v, std::string* out) {
  out->push_back(kTagInt);
  PutLength(static_cast<uint64_t>(v), out);
}

void AppendCanonicalBoolV1(bool v, std::string* out) {
  out->push_back(v ? kTagJsonTrue : kTagJsonFalse);
}

void AppendCanonicalNullV1(std::string* out) { out->push_back(kTagJsonNull); }

std::string CanonicalV1(const AttributeValue& value) {
  std::string out;
  AppendCanonicalV1(value, &out);
  return out;
}

std::string CanonicalItemV1(const Item& item) {
  std::string out;
  AppendCanonicalItemV1(item, &out);
  return out;
}

}  // namespace fdyno::model
