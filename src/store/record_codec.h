// One codec for the store's JSON records (docs/format/): a version byte, then a JSON object
// whose members are the record's fields. A record type writes one list of its fields, a
// template over the codec:
//
//   template <typename Fields, typename R>  // R is const for the encoder
//   void PolicyFields(Fields& f, R& r) { f.Str("document", r.document); f.Int(...); ... }
//
// and that one list serves RecordWriter (encoding, members in list order) and RecordReader
// (decoding), so the two never drift. The reader fails closed: a wrong version, text that is
// not a JSON object, a member missing or of the wrong type, an enum name it does not know, or a
// member the list does not name (written by a newer binary) makes the record unreadable
// (ok() false), never half read. Not thread-safe; one codec per record.
//
// Nested structures are written by the same lists: Object (a member that is an object),
// List (an array of objects), OneOrMany (one object, or an array of one or more). A nested
// list takes the codec and its own part of the record: `[](auto& f, auto& index) {...}`.
// Members a record may lack come in two kinds: Opt* (always written; an older record may lack
// it, which reads as the default) and Sparse* (written only when not the default, absent reads
// as the default). Require(condition) states a rule of the record (a range, a relation between
// members): the reader fails when it does not hold; the writer ignores it.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::store {

class RecordWriter {
 public:
  RecordWriter();
  void Str(const char* name, std::string_view v);
  void Int(const char* name, int64_t v);
  void Bool(const char* name, bool v);
  void Strs(const char* name, const std::vector<std::string>& v);
  // A string a record of an older format may lack (always written).
  void OptStr(const char* name, std::string_view v) { Str(name, v); }
  void OptInt(const char* name, int64_t v) { Int(name, v); }
  void OptBool(const char* name, bool v) { Bool(name, v); }
  void SparseInt(const char* name, int64_t v) {
    if (v != 0) Int(name, v);
  }
  void SparseBool(const char* name, bool v) {
    if (v) Bool(name, v);
  }
  void SparseInts(const char* name, const std::vector<int64_t>& v);
  // Bytes, stored as lowercase hex.
  void Hex(const char* name, std::string_view bytes);
  // An enum stored as its name: names[v].
  template <typename E, size_t N>
  void Enum(const char* name, const std::string_view (&names)[N], E v) {
    Str(name, names[static_cast<size_t>(v)]);
  }
  void Require(bool) {}

  // An object member: fields(*this) writes its members.
  template <typename F>
  void Object(const char* name, F&& fields) {
    Key(name);
    Nested(fields);
  }
  // An object member written only when `present` (the reader reads it when the record has it).
  template <typename F>
  void SparseObject(const char* name, bool present, F&& fields) {
    if (present) Object(name, fields);
  }
  template <typename T, typename F>
  void Opt(const char* name, const std::optional<T>& v, F&& fields) {
    if (v) Object(name, [&](RecordWriter& f) { fields(f, *v); });
  }
  // An array of objects: fields(*this, element) writes an element's members.
  template <typename T, typename F>
  void List(const char* name, const std::vector<T>& v, F&& fields) {
    Key(name);
    w_.StartArray();
    for (const T& e : v) Nested([&](RecordWriter& f) { fields(f, e); });
    w_.EndArray();
  }
  template <typename T, typename F>
  void SparseList(const char* name, const std::vector<T>& v, F&& fields) {
    if (!v.empty()) List(name, v, fields);
  }
  // `first` and `rest`: first's object when `many` is false (rest is then empty), else an
  // array of first and rest (at most `max` in all).
  template <typename T, typename F>
  void OneOrMany(const char* name, const T& first, const std::vector<T>& rest, bool many,
                 size_t /*max*/, F&& fields) {
    if (!many) return Object(name, [&](RecordWriter& f) { fields(f, first); });
    Key(name);
    w_.StartArray();
    Nested([&](RecordWriter& f) { fields(f, first); });
    for (const T& e : rest) Nested([&](RecordWriter& f) { fields(f, e); });
    w_.EndArray();
  }
  template <typename T, typename F>
  void SparseOneOrMany(const char* name, const std::optional<T>& first, const std::vector<T>& rest,
                       bool many, size_t max, F&& fields) {
    if (first) OneOrMany(name, *first, rest, many, max, fields);
  }
  // The record: `version` (one byte), then the JSON object.
  std::string Finish(uint8_t version);

 private:
  void Key(const char* name) { w_.Key(name); }
  template <typename F>
  void Nested(F&& fields) {
    w_.StartObject();
    fields(*this);
    w_.EndObject();
  }
  rapidjson::StringBuffer buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

class RecordReader {
 public:
  // `bytes` as RecordWriter::Finish(version) wrote it.
  RecordReader(std::string_view bytes, uint8_t version);
  // A record of any of `versions`; version() says which.
  RecordReader(std::string_view bytes, std::initializer_list<uint8_t> versions);
  uint8_t version() const { return version_; }
  void Str(const char* name, std::string& out);
  void Int(const char* name, int64_t& out);
  void Int(const char* name, int& out);
  void Bool(const char* name, bool& out);
  void Strs(const char* name, std::vector<std::string>& out);
  // Opt* and Sparse*: absent, `out` keeps its default.
  void OptStr(const char* name, std::string& out);
  void OptInt(const char* name, int64_t& out);
  void OptBool(const char* name, bool& out);
  void SparseInt(const char* name, int64_t& out) { OptInt(name, out); }
  void SparseBool(const char* name, bool& out) { OptBool(name, out); }
  void SparseInts(const char* name, std::vector<int64_t>& out);
  void Hex(const char* name, std::string& bytes);
  void Require(bool holds) {
    if (!holds) Fail();
  }

  template <typename F>
  void Object(const char* name, F&& fields) {
    const rapidjson::Value* v = Find(name);
    if (v == nullptr) return Fail();
    Nested(*v, fields);
  }
  template <typename F>
  void SparseObject(const char* name, bool /*present*/, F&& fields) {
    if (Has(name)) Object(name, fields);
  }
  template <typename T, typename F>
  void Opt(const char* name, std::optional<T>& out, F&& fields) {
    if (!Has(name)) return;
    Object(name, [&](RecordReader& f) { fields(f, out.emplace()); });
  }
  template <typename T, typename F>
  void List(const char* name, std::vector<T>& out, F&& fields) {
    const rapidjson::Value* v = Find(name);
    if (v == nullptr || !v->IsArray()) return Fail();
    out.clear();
    for (const rapidjson::Value& e : v->GetArray()) {
      Nested(e, [&](RecordReader& f) { fields(f, out.emplace_back()); });
    }
  }
  template <typename T, typename F>
  void SparseList(const char* name, std::vector<T>& out, F&& fields) {
    if (Has(name)) List(name, out, fields);
  }
  template <typename T, typename F>
  void OneOrMany(const char* name, T& first, std::vector<T>& rest, bool /*many*/, size_t max,
                 F&& fields) {
    const rapidjson::Value* v = Find(name);
    rest.clear();
    if (v == nullptr) return Fail();
    if (!v->IsArray()) return Nested(*v, [&](RecordReader& f) { fields(f, first); });
    if (v->Empty() || v->Size() > max) return Fail();
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      T& out = i == 0 ? first : rest.emplace_back();
      Nested((*v)[i], [&](RecordReader& f) { fields(f, out); });
    }
  }
  template <typename T, typename F>
  void SparseOneOrMany(const char* name, std::optional<T>& first, std::vector<T>& rest, bool many,
                       size_t max, F&& fields) {
    if (Has(name)) OneOrMany(name, first.emplace(), rest, many, max, fields);
  }
  // An enum stored as its name: the index of the name in `names`.
  template <typename E, size_t N>
  void Enum(const char* name, const std::string_view (&names)[N], E& out) {
    std::string text;
    Str(name, text);
    for (size_t i = 0; i < N; ++i) {
      if (names[i] == text) {
        out = static_cast<E>(i);
        return;
      }
    }
    Fail();
  }
  // Whether every field was read and the record holds no other member.
  bool ok() const;

 private:
  const rapidjson::Value* Find(const char* name);
  bool Has(const char* name) const;
  // Reads `obj`'s members with fields(*this): every one of them, and no other.
  template <typename F>
  void Nested(const rapidjson::Value& obj, F&& fields) {
    if (!ok_ || !obj.IsObject()) return Fail();
    const rapidjson::Value* outer = at_;
    const size_t outer_found = found_;
    at_ = &obj;
    found_ = 0;
    fields(*this);
    if (found_ != obj.MemberCount()) Fail();
    at_ = outer;
    found_ = outer_found;
  }
  void Fail() { ok_ = false; }
  rapidjson::Document d_;
  const rapidjson::Value* at_ = &d_;  // the object whose members are being read
  uint8_t version_ = 0;
  bool ok_ = true;
  size_t found_ = 0;  // members of *at_ the fields read
};

// Internal error "corrupt <record> record" for a record RecordReader could not read.
Error CorruptRecord(std::string_view record);

}  // namespace fdyno::store
