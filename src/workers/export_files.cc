#include "workers/export_files.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/hex.h"
#include "base/md5.h"
#include "model/base64.h"
#include "model/json.h"

namespace fdyno::workers {
namespace {

using model::AttributeValue;
using model::Type;

Error Bad(std::string message) { return Error::Validation(std::move(message)); }

Error IoError(const std::filesystem::path& path, std::string_view what) {
  return Error::Internal(std::string(what) + " " + path.string() + ": " + std::strerror(errno));
}

// ---- Ion text writing -----------------------------------------------------------------------

void AppendIonString(std::string_view s, char quote, std::string& out) {
  out.push_back(quote);
  for (unsigned char c : s) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    } else {
      out.push_back(static_cast<char>(c));  // UTF-8 passes through: Ion text is UTF-8
    }
  }
  out.push_back(quote);
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || s == "true" || s == "false" || s == "null" || s == "nan") return false;
  // A leading '$' could read as a symbol id ($10) or a system symbol: always quoted.
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (unsigned char c : s) {
    if (!(std::isalnum(c) || c == '_' || c == '$')) return false;
  }
  return true;
}

void AppendFieldName(std::string_view name, std::string& out) {
  if (IsIdentifier(name)) {
    out.append(name);
  } else {
    AppendIonString(name, '\'', out);
  }
}

// An Ion decimal (never a float: an Ion 'e' exponent is a float) of a DynamoDB number, as
// DynamoDB's ION export writes it: an integer keeps its significant digits and moves its
// trailing zeros to a 'd' exponent ("103" -> "103.", "600" -> "6d2", "2000" -> "2d3"); a
// fraction is its canonical text ("1.5", "-0.001"), already a decimal.
void AppendIonDecimal(const model::Number& n, std::string& out) {
  const int digits = static_cast<int>(n.digits().size());
  if (n.is_zero()) {
    out += "0.";
  } else if (n.exponent() < digits) {
    out += n.ToString();
  } else {
    if (n.negative()) out.push_back('-');
    out += n.digits();
    const int zeros = n.exponent() - digits;
    out += zeros == 0 ? "." : "d" + std::to_string(zeros);
  }
}

void AppendIon(const AttributeValue& v, std::string& out);

void AppendIonStruct(const model::Map& m, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (const auto& [name, value] : m) {
    if (!first) out.push_back(',');
    first = false;
    AppendFieldName(name, out);
    out.push_back(':');
    AppendIon(value, out);
  }
  out.push_back('}');
}

void AppendIonBlob(std::string_view bytes, std::string& out) {
  out += "{{";
  model::Base64EncodeTo(bytes, &out);
  out += "}}";
}

void AppendIon(const AttributeValue& v, std::string& out) {
  switch (v.type()) {
    case Type::kS:
      AppendIonString(std::get<std::string>(v.v), '"', out);
      return;
    case Type::kN:
      AppendIonDecimal(std::get<model::Number>(v.v), out);
      return;
    case Type::kB:
      AppendIonBlob(std::get<model::Binary>(v.v).bytes, out);
      return;
    case Type::kBool:
      out += std::get<bool>(v.v) ? "true" : "false";
      return;
    case Type::kNull:
      out += "null";
      return;
    case Type::kM:
      AppendIonStruct(std::get<model::Map>(v.v), out);
      return;
    case Type::kL: {
      out.push_back('[');
      const model::List& l = std::get<model::List>(v.v);
      for (size_t i = 0; i < l.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendIon(l[i], out);
      }
      out.push_back(']');
      return;
    }
    case Type::kSS: {
      out += "$dynamodb_SS::[";
      const auto& m = std::get<model::StringSet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendIonString(m[i], '"', out);
      }
      out.push_back(']');
      return;
    }
    case Type::kNS: {
      out += "$dynamodb_NS::[";
      const auto& m = std::get<model::NumberSet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendIonDecimal(m[i], out);
      }
      out.push_back(']');
      return;
    }
    case Type::kBS: {
      out += "$dynamodb_BS::[";
      const auto& m = std::get<model::BinarySet>(v.v).members;
      for (size_t i = 0; i < m.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendIonBlob(m[i], out);
      }
      out.push_back(']');
      return;
    }
  }
}

// ---- Ion text reading -----------------------------------------------------------------------

// Recursive descent over the Ion text subset DynamoDB exports use. Values become attribute
// values directly: struct M, list L (or a set under a $dynamodb_SS/NS/BS annotation), string S,
// int, decimal and float N, blob B, bool BOOL, null NULL.
class IonParser {
 public:
  explicit IonParser(std::string_view text) : s_(text) {}

  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }

  // One top-level value: nullopt for the version marker $ion_1_0.
  Result<std::optional<AttributeValue>> TopLevel() {
    SkipSpace();
    if (s_.substr(i_).starts_with("$ion_1_0")) {
      i_ += 8;
      return std::optional<AttributeValue>();
    }
    FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(0));
    return std::optional<AttributeValue>(std::move(v));
  }

 private:
  static constexpr int kMaxDepth = 40;

  void SkipSpace() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        ++i_;
      } else if (s_.substr(i_).starts_with("//")) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (s_.substr(i_).starts_with("/*")) {
        const size_t end = s_.find("*/", i_ + 2);
        i_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else {
        return;
      }
    }
  }

  bool Peek(std::string_view t) const { return s_.substr(i_).starts_with(t); }

  Error Unexpected() const { return Bad("invalid Ion text at offset " + std::to_string(i_)); }

  static bool IdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  }

  std::string_view Identifier() {
    const size_t start = i_;
    while (i_ < s_.size() && IdentChar(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }

  // A quoted string or symbol body after its opening quote.
  Result<std::string> Quoted(char quote) {
    std::string out;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == quote) return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case '0':
          out.push_back('\0');
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case '"':
        case '\'':
        case '\\':
        case '/':
        case '?':
          out.push_back(e);
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i_ + n > s_.size()) return Unexpected();
          uint32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            const char h = s_[i_++];
            if (!std::isxdigit(static_cast<unsigned char>(h))) return Unexpected();
            cp = cp * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h))
                                                     ? h - '0'
                                                     : (std::tolower(h) - 'a' + 10));
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Unexpected();
      }
    }
    return Unexpected();
  }

  static void AppendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A field name or annotation: an identifier, a 'quoted symbol' or a "string".
  Result<std::optional<std::string>> Symbol() {
    if (Peek("'''")) return Unexpected();  // long strings are not read
    if (Peek("'") || Peek("\"")) {
      const char q = s_[i_++];
      FDYNO_ASSIGN_OR_RETURN(std::string s, Quoted(q));
      return std::optional<std::string>(std::move(s));
    }
    if (i_ < s_.size() &&
        (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '$')) {
      return std::optional<std::string>(std::string(Identifier()));
    }
    return std::optional<std::string>();
  }

  Result<AttributeValue> Value(int depth) {
    if (depth > kMaxDepth) return Bad("Ion value nested too deeply");
    SkipSpace();
    // Annotations: symbol '::'.
    std::string annotation;
    for (;;) {
      const size_t at = i_;
      if (Peek("{") || Peek("[") || Peek("\"")) break;
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> sym, Symbol());
      if (!sym) break;
      SkipSpace();
      if (Peek("::")) {
        i_ += 2;
        annotation = std::move(*sym);
        SkipSpace();
        continue;
      }
      i_ = at;
      break;
    }
    if (!annotation.empty()) return Annotated(annotation, depth);
    if (Peek("{{")) return Blob();
    if (Peek("{")) return Struct(depth);
    if (Peek("[")) {
      FDYNO_ASSIGN_OR_RETURN(model::List l, List(depth));
      return AttributeValue::L(std::move(l));
    }
    if (Peek("\"")) {
      ++i_;
      FDYNO_ASSIGN_OR_RETURN(std::string s, Quoted('"'));
      return AttributeValue::S(std::move(s));
    }
    if (i_ < s_.size() &&
        (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+')) {
      return NumberValue();
    }
    const std::string_view word = Identifier();
    if (word == "true" || word == "false") return AttributeValue::Bool(word == "true");
    if (word == "null") {
      if (Peek(".")) {  // typed nulls (null.string, ...) are nulls too
        ++i_;
        Identifier();
      }
      return AttributeValue::MakeNull();
    }
    return Unexpected();
  }

  Result<AttributeValue> Annotated(const std::string& annotation, int depth) {
    SkipSpace();
    if (!Peek("[")) return Unexpected();
    FDYNO_ASSIGN_OR_RETURN(model::List l, List(depth));
    if (annotation == "$dynamodb_SS") {
      model::StringSet set;
      for (AttributeValue& m : l) {
        if (m.type() != Type::kS) return Bad("a $dynamodb_SS member is not a string");
        set.members.push_back(std::get<std::string>(std::move(m.v)));
      }
      return AttributeValue{std::move(set)};
    }
    if (annotation == "$dynamodb_NS") {
      model::NumberSet set;
      for (AttributeValue& m : l) {
        if (m.type() != Type::kN) return Bad("a $dynamodb_NS member is not a number");
        set.members.push_back(std::get<model::Number>(std::move(m.v)));
      }
      return AttributeValue{std::move(set)};
    }
    if (annotation == "$dynamodb_BS") {
      model::BinarySet set;
      for (AttributeValue& m : l) {
        if (m.type() != Type::kB) return Bad("a $dynamodb_BS member is not a blob");
        set.members.push_back(std::get<model::Binary>(std::move(m.v)).bytes);
      }
      return AttributeValue{std::move(set)};
    }
    return Bad("unknown Ion annotation " + annotation);
  }

  Result<AttributeValue> Blob() {
    i_ += 2;
    std::string text;
    while (i_ < s_.size() && !Peek("}}")) {
      const char c = s_[i_++];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') text.push_back(c);
    }
    if (!Peek("}}")) return Unexpected();
    i_ += 2;
    std::optional<std::string> bytes = model::Base64Decode(text);
    if (!bytes) return Bad("an Ion blob is not base64");
    return AttributeValue::B(std::move(*bytes));
  }

  Result<AttributeValue> Struct(int depth) {
    ++i_;
    model::Map m;
    SkipSpace();
    if (Peek("}")) {
      ++i_;
      return AttributeValue::M(std::move(m));
    }
    for (;;) {
      SkipSpace();
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> name, Symbol());
      if (!name) return Unexpected();
      SkipSpace();
      if (!Peek(":")) return Unexpected();
      ++i_;
      FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(depth + 1));
      if (!m.emplace(std::move(*name), std::move(v)).second) return Bad("a duplicate Ion field");
      SkipSpace();
      if (Peek(",")) {
        ++i_;
        SkipSpace();
        if (Peek("}")) {
          ++i_;
          break;
        }
        continue;
      }
      if (Peek("}")) {
        ++i_;
        break;
      }
      return Unexpected();
    }
    return AttributeValue::M(std::move(m));
  }

  Result<model::List> List(int depth) {
    ++i_;
    model::List l;
    SkipSpace();
    if (Peek("]")) {
      ++i_;
      return l;
    }
    for (;;) {
      FDYNO_ASSIGN_OR_RETURN(AttributeValue v, Value(depth + 1));
      l.push_back(std::move(v));
      SkipSpace();
      if (Peek(",")) {
        ++i_;
        SkipSpace();
        if (Peek("]")) {
          ++i_;
          break;
        }
        continue;
      }
      if (Peek("]")) {
        ++i_;
        break;
      }
      return Unexpected();
    }
    return l;
  }

  Result<AttributeValue> NumberValue() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == '-' || s_[i_] == '+' || s_[i_] == '_')) {
      ++i_;
    }
    std::string text;
    for (char c : s_.substr(start, i_ - start)) {
      if (c == '_') continue;
      text.push_back(c == 'd' || c == 'D' ? 'E' : c);
    }
    if (text.find_first_of("xXbB") != std::string::npos) {
      return Bad("Ion hexadecimal and binary ints are not read");
    }
    if (text.ends_with('.')) text.pop_back();
    const size_t dot_e = text.find(".E");
    if (dot_e != std::string::npos) text.erase(dot_e, 1);
    Result<model::Number> n = model::Number::Parse(text);
    if (!n.ok()) return Bad("an Ion number is not a DynamoDB number: " + text);
    return AttributeValue::N(std::move(n).value());
  }

  std::string_view s_;
  size_t i_ = 0;
};

// Validates an item built from Ion or CSV as a request's item would be: through DynamoDB JSON,
// so the same rules (empty sets, duplicate members, number range, nesting) apply.
Result<model::Item> Validated(const model::Item& item) {
  return model::ItemFromJson(model::ItemToJson(item));
}

// ---- decompression --------------------------------------------------------------------------

constexpr size_t kBufferBytes = 64 << 10;

// The bytes of a file, decompressed.
class Source {
 public:
  virtual ~Source() = default;
  // Up to `cap` bytes into `out`; 0 at the end.
  virtual Result<size_t> Read(char* out, size_t cap) = 0;
  int64_t file_bytes = 0;
};

struct FileCloser {
  void operator()(FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

class PlainSource : public Source {
 public:
  explicit PlainSource(File f) : f_(std::move(f)) {}
  Result<size_t> Read(char* out, size_t cap) override {
    const size_t n = std::fread(out, 1, cap, f_.get());
    if (n == 0 && std::ferror(f_.get())) return Error::Internal("cannot read an import file");
    file_bytes += static_cast<int64_t>(n);
    return n;
  }

 private:
  File f_;
};

class GzipSource : public Source {
 public:
  explicit GzipSource(File f) : f_(std::move(f)), in_(kBufferBytes, '\0') {
    inflateInit2(&z_, 15 + 32);  // gzip or zlib headers
  }
  ~GzipSource() override { inflateEnd(&z_); }
  Result<size_t> Read(char* out, size_t cap) override {
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(cap);
    while (z_.avail_out == cap && !done_) {
      if (z_.avail_in == 0) {
        const size_t n = std::fread(in_.data(), 1, in_.size(), f_.get());
        file_bytes += static_cast<int64_t>(n);
        if (n == 0) {
          if (!ended_ || started_) return Bad("the gzip data of an import file is truncated");
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      started_ = true;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ended_ = true;
        started_ = false;
        inflateReset(&z_);  // a further gzip member may follow
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Bad("an import file is not valid gzip data");
      }
    }
    return cap - z_.avail_out;
  }

 private:
  File f_;
  std::string in_;
  z_stream z_{};
  bool ended_ = false;    // a member ended
  bool started_ = false;  // a member began and has not ended
  bool done_ = false;
};

class ZstdSource : public Source {
 public:
  explicit ZstdSource(File f) : f_(std::move(f)), in_(kBufferBytes, '\0'), z_(ZSTD_createDCtx()) {}
  ~ZstdSource() override { ZSTD_freeDCtx(z_); }
  Result<size_t> Read(char* out, size_t cap) override {
    ZSTD_outBuffer o{out, cap, 0};
    while (o.pos == 0 && !done_) {
      if (input_.pos == input_.size) {
        const size_t n = std::fread(in_.data(), 1, in_.size(), f_.get());
        file_bytes += static_cast<int64_t>(n);
        if (n == 0) {
          if (pending_ != 0) return Bad("the zstd data of an import file is truncated");
          done_ = true;
          break;
        }
        input_ = ZSTD_inBuffer{in_.data(), n, 0};
      }
      pending_ = ZSTD_decompressStream(z_, &o, &input_);
      if (ZSTD_isError(pending_)) return Bad("an import file is not valid zstd data");
    }
    return o.pos;
  }

 private:
  File f_;
  std::string in_;
  ZSTD_DCtx* z_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  size_t pending_ = 0;
  bool done_ = false;
};

class SourceLineReader : public LineReader {
 public:
  explicit SourceLineReader(std::unique_ptr<Source> source) : source_(std::move(source)) {}

  Result<std::optional<std::string>> Next() override {
    for (;;) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        std::string line = buf_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        if (line.ends_with('\r')) line.pop_back();
        return std::optional<std::string>(std::move(line));
      }
      if (eof_) {
        if (pos_ >= buf_.size()) return std::optional<std::string>();
        std::string line = buf_.substr(pos_);
        pos_ = buf_.size();
        if (line.ends_with('\r')) line.pop_back();
        return std::optional<std::string>(std::move(line));
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      const size_t old = buf_.size();
      buf_.resize(old + kBufferBytes);
      Result<size_t> n = source_->Read(buf_.data() + old, kBufferBytes);
      if (!n.ok()) return std::move(n).error();
      buf_.resize(old + *n);
      if (*n == 0) eof_ = true;
    }
  }

  int64_t file_bytes() const override { return source_->file_bytes; }

 private:
  std::unique_ptr<Source> source_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

Status SyncAndClose(File f, const std::filesystem::path& path) {
  if (std::fflush(f.get()) != 0 || ::fsync(fileno(f.get())) != 0) {
    return IoError(path, "cannot write");
  }
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) return IoError(path, "cannot close");
  return Status::Ok();
}

}  // namespace

// ---- items as lines -------------------------------------------------------------------------

std::string DynamoJsonLine(const model::Item& item) {
  std::string out = "{\"Item\":";
  out += model::ItemToJson(item);
  out.push_back('}');
  return out;
}

std::string IonText(const AttributeValue& value) {
  std::string out;
  AppendIon(value, out);
  return out;
}

std::string IonLine(const model::Item& item) {
  std::string out = "$ion_1_0 {Item:";
  AppendIonStruct(item, out);
  out.push_back('}');
  return out;
}

std::string IncrementalLine(store::ExportFormat format, int64_t write_micros,
                            const model::Item& keys, const model::Item* new_image,
                            const model::Item* old_image) {
  const std::string micros = std::to_string(write_micros);
  std::string out;
  if (format == store::ExportFormat::kIon) {
    out = "$ion_1_0 {Metadata:{WriteTimestampMicros:" + micros + ".},Keys:";
    AppendIonStruct(keys, out);
    if (new_image != nullptr) {
      out += ",NewImage:";
      AppendIonStruct(*new_image, out);
    }
    if (old_image != nullptr) {
      out += ",OldImage:";
      AppendIonStruct(*old_image, out);
    }
    out.push_back('}');
    return out;
  }
  out = "{\"Metadata\":{\"WriteTimestampMicros\":{\"N\":\"" + micros + "\"}},\"Keys\":";
  out += model::ItemToJson(keys);
  if (new_image != nullptr) out += ",\"NewImage\":" + model::ItemToJson(*new_image);
  if (old_image != nullptr) out += ",\"OldImage\":" + model::ItemToJson(*old_image);
  out.push_back('}');
  return out;
}

Result<model::Item> ParseDynamoJsonLine(std::string_view line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  if (d.HasParseError() || !d.IsObject()) return Bad("a line is not a JSON object");
  // Through a const reference: RapidJSON 1.1's mutable member iterators compare ambiguously in
  // C++20 (clang's -Wambiguous-reversed-operator).
  const rapidjson::Document& item_line = d;
  auto it = item_line.FindMember("Item");
  if (it == item_line.MemberEnd() || !it->value.IsObject() || d.MemberCount() != 1) {
    return Bad("a line is not {\"Item\":{...}}");
  }
  return model::DecodeItem(it->value);
}

Result<std::vector<model::Item>> ParseIonLine(std::string_view line) {
  IonParser p(line);
  std::vector<model::Item> items;
  while (!p.AtEnd()) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<AttributeValue> v, p.TopLevel());
    if (!v) continue;
    const model::Map* top = std::get_if<model::Map>(&v->v);
    if (top == nullptr || top->size() != 1 || !top->contains("Item") ||
        top->at("Item").type() != Type::kM) {
      return Bad("an Ion value is not {Item:{...}}");
    }
    FDYNO_ASSIGN_OR_RETURN(model::Item item, Validated(std::get<model::Map>(top->at("Item").v)));
    items.push_back(std::move(item));
  }
  return items;
}

// ---- CSV ------------------------------------------------------------------------------------

Result<std::vector<std::string>> ParseCsvRecord(std::string_view record, char delimiter) {
  std::vector<std::string> fields;
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < record.size() && record[i] == '"') {
      ++i;
      for (;;) {
        if (i >= record.size()) return Bad("a quoted CSV field is not closed");
        if (record[i] == '"') {
          if (i + 1 < record.size() && record[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(record[i++]);
      }
      if (i < record.size() && record[i] != delimiter) {
        return Bad("a quoted CSV field is followed by other text");
      }
    } else {
      while (i < record.size() && record[i] != delimiter) field.push_back(record[i++]);
    }
    fields.push_back(field);
    if (i >= record.size()) return fields;
    ++i;  // the delimiter
  }
}

bool CsvRecordOpen(std::string_view text) {
  bool open = false;
  for (char c : text) {
    if (c == '"') open = !open;  // "" inside a quoted field toggles twice
  }
  return open;
}

Result<model::Item> CsvItem(const store::TableInfo& table, const std::vector<std::string>& headers,
                            const std::vector<std::string>& cells) {
  if (cells.size() > headers.size()) return Error::Validation("more CSV cells than headers");
  model::Item item;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].empty()) continue;
    model::ScalarType type = model::ScalarType::kS;
    for (const store::AttributeDefinition& d : table.attribute_definitions) {
      if (d.name == headers[i]) type = d.type;
    }
    if (type == model::ScalarType::kN) {
      FDYNO_ASSIGN_OR_RETURN(model::Number n, model::Number::Parse(cells[i]));
      item[headers[i]] = model::AttributeValue::N(std::move(n));
    } else if (type == model::ScalarType::kB) {
      std::optional<std::string> bytes = model::Base64Decode(cells[i]);
      if (!bytes) return Error::Validation("a binary CSV cell is not base64");
      item[headers[i]] = model::AttributeValue::B(std::move(*bytes));
    } else {
      item[headers[i]] = model::AttributeValue::S(cells[i]);
    }
  }
  return item;
}

// ---- files ----------------------------------------------------------------------------------

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::filesystem::path& path,
                                                     store::Compression compression) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return IoError(path, "cannot open");
  std::unique_ptr<Source> source;
  switch (compression) {
    case store::Compression::kNone:
      source = std::make_unique<PlainSource>(std::move(f));
      break;
    case store::Compression::kGzip:
      source = std::make_unique<GzipSource>(std::move(f));
      break;
    case store::Compression::kZstd:
      source = std::make_unique<ZstdSource>(std::move(f));
      break;
  }
  return std::unique_ptr<LineReader>(std::make_unique<SourceLineReader>(std::move(source)));
}

struct GzipFileWriter::State {
  std::filesystem::path path;
  File file;
  z_stream z{};
  Md5 md5;
  std::string digest;
  std::string out = std::string(kBufferBytes, '\0');

  Status Deflate(int flush) {
    for (;;) {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      const int rc = deflate(&z, flush);
      const size_t n = out.size() - z.avail_out;
      if (n > 0) {
        if (std::fwrite(out.data(), 1, n, file.get()) != n) return IoError(path, "cannot write");
        md5.Add(std::string_view(out.data(), n));
      }
      if (rc == Z_STREAM_END) return Status::Ok();
      if (rc != Z_OK && rc != Z_BUF_ERROR) return Error::Internal("gzip compression failed");
      if (z.avail_out != 0 && (flush == Z_NO_FLUSH || z.avail_in == 0) && flush != Z_FINISH) {
        return Status::Ok();
      }
    }
  }
};

GzipFileWriter::GzipFileWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}

GzipFileWriter::~GzipFileWriter() {
  if (state_) deflateEnd(&state_->z);
}

Result<std::unique_ptr<GzipFileWriter>> GzipFileWriter::Create(const std::filesystem::path& path) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->file.reset(std::fopen(path.c_str(), "wb"));
  if (!state->file) return IoError(path, "cannot create");
  if (deflateInit2(&state->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Error::Internal("gzip compression cannot start");
  }
  return std::unique_ptr<GzipFileWriter>(new GzipFileWriter(std::move(state)));
}

Status GzipFileWriter::Append(std::string_view data) {
  state_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  state_->z.avail_in = static_cast<uInt>(data.size());
  while (state_->z.avail_in > 0) FDYNO_RETURN_IF_ERROR(state_->Deflate(Z_NO_FLUSH));
  return Status::Ok();
}

Status GzipFileWriter::Finish() {
  state_->z.next_in = nullptr;
  state_->z.avail_in = 0;
  FDYNO_RETURN_IF_ERROR(state_->Deflate(Z_FINISH));
  state_->digest = state_->md5.Raw();
  return SyncAndClose(std::move(state_->file), state_->path);
}

std::string GzipFileWriter::md5_base64() const { return model::Base64Encode(state_->digest); }

std::string GzipFileWriter::md5_hex() const { return HexLower(state_->digest); }

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return IoError(tmp, "cannot create");
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size()) {
    return IoError(tmp, "cannot write");
  }
  FDYNO_RETURN_IF_ERROR(SyncAndClose(std::move(f), tmp));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error::Internal("cannot rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace fdyno::workers
