#include "store/record_codec.h"

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

std::string RecordWriter::Finish(uint8_t version) {
  w_.EndObject();
  std::string out(1, static_cast<char>(version));
  out.append(buf_.GetString(), buf_.GetSize());
  return out;
}

RecordReader::RecordReader(std::string_view bytes, uint8_t version) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != version) {
    ok_ = false;
    return;
  }
  d_.Parse(bytes.data() + 1, bytes.size() - 1);
  ok_ = !d_.HasParseError() && d_.IsObject();
}

const rapidjson::Value* RecordReader::Find(const char* name) {
  if (!ok_) return nullptr;
  auto it = d_.FindMember(name);
  if (it == d_.MemberEnd()) return nullptr;
  ++found_;
  return &it->value;
}

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

bool RecordReader::ok() const { return ok_ && found_ == d_.MemberCount(); }

Error CorruptRecord(std::string_view record) {
  return Error::Internal("corrupt " + std::string(record) + " record");
}

}  // namespace fdyno::store
