#include "store/record_codec.h"

#include <limits>
#include <optional>
#include <utility>

namespace fdyno::store {

RecordWriter::RecordWriter() : w_(buf_) { w_.StartObject(); }

void RecordWriter::Str(const char* name, std::string_view v) {
  w_.Key(name);
  w_.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void RecordWriter::Int(const char* name, int64_t v) {
  w_.Key(name);
  w_.Int64(v);
}

void RecordWriter::Bool(const char* name, bool v) {
  w_.Key(name);
  w_.Bool(v);
}

void RecordWriter::Strs(const char* name, const std::vector<std::string>& v) {
  w_.Key(name);
  w_.StartArray();
  for (const std::string& s : v) w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w_.EndArray();
}

void RecordWriter::SparseInts(const char* name, const std::vector<int64_t>& v) {
  if (v.empty()) return;
  w_.Key(name);
  w_.StartArray();
  for (int64_t i : v) w_.Int64(i);
  w_.EndArray();
}

namespace {

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 0xF]);
  }
  return out;
}

std::optional<std::string> FromHex(std::string_view text) {
  auto digit = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

}  // namespace

void RecordWriter::Hex(const char* name, std::string_view bytes) { Str(name, ToHex(bytes)); }

std::string RecordWriter::Finish(uint8_t version) {
  w_.EndObject();
  std::string out(1, static_cast<char>(version));
  out.append(buf_.GetString(), buf_.GetSize());
  return out;
}

RecordReader::RecordReader(std::string_view bytes, uint8_t version)
    : RecordReader(bytes, {version}) {}

RecordReader::RecordReader(std::string_view bytes, std::initializer_list<uint8_t> versions) {
  ok_ = false;
  if (bytes.empty()) return;
  version_ = static_cast<uint8_t>(bytes[0]);
  for (uint8_t v : versions) ok_ = ok_ || v == version_;
  if (!ok_) return;
  d_.Parse(bytes.data() + 1, bytes.size() - 1);
  ok_ = !d_.HasParseError() && d_.IsObject();
}

const rapidjson::Value* RecordReader::Find(const char* name) {
  if (!ok_) return nullptr;
  const rapidjson::Value& at = *at_;  // const iterators (clang: no reversed == candidates)
  auto it = at.FindMember(name);
  if (it == at.MemberEnd()) return nullptr;
  ++found_;
  return &it->value;
}

bool RecordReader::Has(const char* name) const { return ok_ && at_->HasMember(name); }

void RecordReader::Str(const char* name, std::string& out) {
  const rapidjson::Value* v = Find(name);
  if (v == nullptr || !v->IsString()) return Fail();
  out.assign(v->GetString(), v->GetStringLength());
}

void RecordReader::Int(const char* name, int64_t& out) {
  const rapidjson::Value* v = Find(name);
  if (v == nullptr || !v->IsInt64()) return Fail();
  out = v->GetInt64();
}

void RecordReader::Int(const char* name, int& out) {
  int64_t v = 0;
  Int(name, v);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return Fail();
  out = static_cast<int>(v);
}

void RecordReader::Bool(const char* name, bool& out) {
  const rapidjson::Value* v = Find(name);
  if (v == nullptr || !v->IsBool()) return Fail();
  out = v->GetBool();
}

void RecordReader::Strs(const char* name, std::vector<std::string>& out) {
  const rapidjson::Value* v = Find(name);
  if (v == nullptr || !v->IsArray()) return Fail();
  out.clear();
  for (const rapidjson::Value& s : v->GetArray()) {
    if (!s.IsString()) return Fail();
    out.emplace_back(s.GetString(), s.GetStringLength());
  }
}

void RecordReader::OptStr(const char* name, std::string& out) {
  if (Has(name)) Str(name, out);
}

void RecordReader::OptInt(const char* name, int64_t& out) {
  if (Has(name)) Int(name, out);
}

void RecordReader::OptBool(const char* name, bool& out) {
  if (Has(name)) Bool(name, out);
}

void RecordReader::SparseInts(const char* name, std::vector<int64_t>& out) {
  if (!Has(name)) return;
  const rapidjson::Value* v = Find(name);
  if (!v->IsArray()) return Fail();
  out.clear();
  for (const rapidjson::Value& i : v->GetArray()) {
    if (!i.IsInt64()) return Fail();
    out.push_back(i.GetInt64());
  }
}

void RecordReader::Hex(const char* name, std::string& bytes) {
  std::string text;
  Str(name, text);
  std::optional<std::string> decoded = FromHex(text);
  if (!decoded) return Fail();
  bytes = std::move(*decoded);
}

bool RecordReader::ok() const { return ok_ && found_ == d_.MemberCount(); }

Error CorruptRecord(std::string_view record) {
  return Error::Internal("corrupt " + std::string(record) + " record");
}

}  // namespace fdyno::store
