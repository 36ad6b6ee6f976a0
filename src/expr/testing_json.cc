#include "expr/testing_json.h"

#include <memory>
#include <vector>

namespace fdyno::expr::testing {
namespace {

struct Field;

struct Json {
  enum class Kind { kNull, kBool, kString, kNumber, kArray, kObject };
  Kind kind = Kind::kNull;
  bool b = false;
  std::string s;  // string contents or number text
  std::vector<Json> items;
  std::vector<Field> fields;  // not std::pair: clang 14 rejects a pair of an incomplete type
};

struct Field {
  std::string first;  // the member name
  Json second;
};

class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}

  std::optional<Json> ReadAll(std::string* error) {
    auto v = Read();
    Skip();
    if (v && i_ != t_.size()) err_ = "trailing characters";
    if (!err_.empty()) {
      *error = err_ + " at offset " + std::to_string(i_);
      return std::nullopt;
    }
    return v;
  }

 private:
  void Skip() {
    while (i_ < t_.size() &&
           (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) {
      ++i_;
    }
  }

  std::optional<std::string> ReadString() {
    if (i_ >= t_.size() || t_[i_] != '"') {
      err_ = "expected string";
      return std::nullopt;
    }
    ++i_;
    std::string out;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      char e = t_[i_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'u': {
          if (i_ + 4 > t_.size()) {
            err_ = "bad escape";
            return std::nullopt;
          }
          unsigned cp = std::stoul(std::string(t_.substr(i_, 4)), nullptr, 16);
          i_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          out += e;
      }
    }
    if (i_ >= t_.size()) {
      err_ = "unterminated string";
      return std::nullopt;
    }
    ++i_;
    return out;
  }

  std::optional<Json> Read() {
    Skip();
    if (i_ >= t_.size()) {
      err_ = "unexpected end";
      return std::nullopt;
    }
    Json j;
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      j.kind = Json::Kind::kObject;
      Skip();
      if (i_ < t_.size() && t_[i_] == '}') {
        ++i_;
        return j;
      }
      while (true) {
        Skip();
        auto key = ReadString();
        if (!key) return std::nullopt;
        Skip();
        if (i_ >= t_.size() || t_[i_] != ':') {
          err_ = "expected ':'";
          return std::nullopt;
        }
        ++i_;
        auto v = Read();
        if (!v) return std::nullopt;
        j.fields.push_back(Field{std::move(*key), std::move(*v)});
        Skip();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == '}') {
          ++i_;
          return j;
        }
        err_ = "expected ',' or '}'";
        return std::nullopt;
      }
    }
    if (c == '[') {
      ++i_;
      j.kind = Json::Kind::kArray;
      Skip();
      if (i_ < t_.size() && t_[i_] == ']') {
        ++i_;
        return j;
      }
      while (true) {
        auto v = Read();
        if (!v) return std::nullopt;
        j.items.push_back(std::move(*v));
        Skip();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == ']') {
          ++i_;
          return j;
        }
        err_ = "expected ',' or ']'";
        return std::nullopt;
      }
    }
    if (c == '"') {
      auto s = ReadString();
      if (!s) return std::nullopt;
      j.kind = Json::Kind::kString;
      j.s = std::move(*s);
      return j;
    }
    if (t_.substr(i_, 4) == "true" || t_.substr(i_, 5) == "false") {
      j.kind = Json::Kind::kBool;
      j.b = t_[i_] == 't';
      i_ += j.b ? 4 : 5;
      return j;
    }
    if (t_.substr(i_, 4) == "null") {
      i_ += 4;
      return j;
    }
    size_t start = i_;
    while (i_ < t_.size() && (isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '-' ||
                              t_[i_] == '+' || t_[i_] == '.' || t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
    }
    if (start == i_) {
      err_ = "unexpected character";
      return std::nullopt;
    }
    j.kind = Json::Kind::kNumber;
    j.s = std::string(t_.substr(start, i_ - start));
    return j;
  }

  std::string_view t_;
  size_t i_ = 0;
  std::string err_;
};

std::optional<std::string> Base64Decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = val(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string Base64Encode(const std::string& bytes) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kChars[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kChars[(acc << (6 - bits)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

std::optional<model::AttributeValue> ToValue(const Json& j, std::string* error);

std::optional<model::Map> ToMap(const Json& j, std::string* error) {
  if (j.kind != Json::Kind::kObject) {
    *error = "expected an object of attribute values";
    return std::nullopt;
  }
  model::Map out;
  for (const auto& [k, v] : j.fields) {
    auto value = ToValue(v, error);
    if (!value) return std::nullopt;
    out.insert_or_assign(k, std::move(*value));
  }
  return out;
}

std::optional<model::AttributeValue> ToValue(const Json& j, std::string* error) {
  if (j.kind != Json::Kind::kObject || j.fields.size() != 1) {
    *error = "an attribute value is an object with one type key";
    return std::nullopt;
  }
  const std::string& type = j.fields[0].first;
  const Json& v = j.fields[0].second;
  auto number = [&](const std::string& text) -> std::optional<model::Number> {
    auto n = model::Number::Parse(text);
    if (!n.ok()) {
      *error = n.error().message;
      return std::nullopt;
    }
    return *n;
  };
  if (type == "S" && v.kind == Json::Kind::kString) return model::AttributeValue::S(v.s);
  if (type == "N" && v.kind == Json::Kind::kString) {
    auto n = number(v.s);
    if (!n) return std::nullopt;
    return model::AttributeValue::N(*n);
  }
  if (type == "B" && v.kind == Json::Kind::kString) {
    auto b = Base64Decode(v.s);
    if (!b) {
      *error = "bad base64";
      return std::nullopt;
    }
    return model::AttributeValue::B(*b);
  }
  if (type == "BOOL" && v.kind == Json::Kind::kBool) return model::AttributeValue::Bool(v.b);
  if (type == "NULL" && v.kind == Json::Kind::kBool) return model::AttributeValue::MakeNull();
  if (type == "M") {
    auto m = ToMap(v, error);
    if (!m) return std::nullopt;
    return model::AttributeValue::M(std::move(*m));
  }
  if (v.kind != Json::Kind::kArray) {
    *error = "bad attribute value of type " + type;
    return std::nullopt;
  }
  if (type == "L") {
    model::List l;
    for (const Json& e : v.items) {
      auto value = ToValue(e, error);
      if (!value) return std::nullopt;
      l.push_back(std::move(*value));
    }
    return model::AttributeValue::L(std::move(l));
  }
  model::AttributeValue out;
  for (const Json& e : v.items) {
    if (e.kind != Json::Kind::kString) {
      *error = "set members are strings";
      return std::nullopt;
    }
  }
  if (type == "SS") {
    model::StringSet s;
    for (const Json& e : v.items) s.members.push_back(e.s);
    out.v = std::move(s);
  } else if (type == "NS") {
    model::NumberSet s;
    for (const Json& e : v.items) {
      auto n = number(e.s);
      if (!n) return std::nullopt;
      s.members.push_back(*n);
    }
    out.v = std::move(s);
  } else if (type == "BS") {
    model::BinarySet s;
    for (const Json& e : v.items) {
      auto b = Base64Decode(e.s);
      if (!b) {
        *error = "bad base64";
        return std::nullopt;
      }
      s.members.push_back(*b);
    }
    out.v = std::move(s);
  } else {
    *error = "unknown type " + type;
    return std::nullopt;
  }
  return out;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::optional<model::Item> ParseItemJson(std::string_view text, std::string* error) {
  Reader r(text);
  auto j = r.ReadAll(error);
  if (!j) return std::nullopt;
  return ToMap(*j, error);
}

std::optional<std::map<std::string, std::string>> ParseStringMapJson(std::string_view text,
                                                                     std::string* error) {
  Reader r(text);
  auto j = r.ReadAll(error);
  if (!j) return std::nullopt;
  if (j->kind != Json::Kind::kObject) {
    *error = "expected an object";
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j->fields) {
    if (v.kind != Json::Kind::kString) {
      *error = "expected string values";
      return std::nullopt;
    }
    out[k] = v.s;
  }
  return out;
}

std::string ValueToJson(const model::AttributeValue& v) {
  std::string t = "{\"" + std::string(model::TypeName(v.type())) + "\":";
  switch (v.type()) {
    case model::Type::kS:
      return t + Quote(std::get<std::string>(v.v)) + "}";
    case model::Type::kN:
      return t + Quote(std::get<model::Number>(v.v).ToString()) + "}";
    case model::Type::kB:
      return t + Quote(Base64Encode(std::get<model::Binary>(v.v).bytes)) + "}";
    case model::Type::kBool:
      return t + (std::get<bool>(v.v) ? "true" : "false") + "}";
    case model::Type::kNull:
      return t + "true}";
    case model::Type::kM:
      return t + ItemToJson(std::get<model::Map>(v.v)) + "}";
    case model::Type::kL: {
      std::string out = t + "[";
      const auto& l = std::get<model::List>(v.v);
      for (size_t i = 0; i < l.size(); ++i) out += (i ? "," : "") + ValueToJson(l[i]);
      return out + "]}";
    }
    case model::Type::kSS: {
      std::string out = t + "[";
      const auto& m = std::get<model::StringSet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) out += (i ? "," : "") + Quote(m[i]);
      return out + "]}";
    }
    case model::Type::kNS: {
      std::string out = t + "[";
      const auto& m = std::get<model::NumberSet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) out += (i ? "," : "") + Quote(m[i].ToString());
      return out + "]}";
    }
    case model::Type::kBS: {
      std::string out = t + "[";
      const auto& m = std::get<model::BinarySet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) out += (i ? "," : "") + Quote(Base64Encode(m[i]));
      return out + "]}";
    }
  }
  return "?";
}

std::string ItemToJson(const model::Item& item) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : item) {
    if (!first) out += ",";
    first = false;
    out += Quote(k) + ":" + ValueToJson(v);
  }
  return out + "}";
}

}  // namespace fdyno::expr::testing
