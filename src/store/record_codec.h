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
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
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
  // Bytes, stored as lowercase hex.
  void Hex(const char* name, std::string_view bytes);
  // An enum stored as its name: names[v].
  template <typename E, size_t N>
  void Enum(const char* name, const std::string_view (&names)[N], E v) {
    Str(name, names[static_cast<size_t>(v)]);
  }
  // The record: `version` (one byte), then the JSON object.
  std::string Finish(uint8_t version);

 private:
  rapidjson::StringBuffer buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

class RecordReader {
 public:
  // `bytes` as RecordWriter::Finish(version) wrote it.
  RecordReader(std::string_view bytes, uint8_t version);
  void Str(const char* name, std::string& out);
  void Int(const char* name, int64_t& out);
  void Bool(const char* name, bool& out);
  void Strs(const char* name, std::vector<std::string>& out);
  // Absent: `out` keeps its default.
  void OptStr(const char* name, std::string& out);
  void Hex(const char* name, std::string& bytes);
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
  void Fail() { ok_ = false; }
  rapidjson::Document d_;
  bool ok_ = true;
  size_t found_ = 0;  // members the fields read
};

// Internal error "corrupt <record> record" for a record RecordReader could not read.
Error CorruptRecord(std::string_view record);

}  // namespace fdyno::store
