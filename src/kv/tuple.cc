#include "kv/tuple.h"

#include <cassert>
#include <cstring>

namespace fdyno::kv {
namespace {

// Type codes of FoundationDB's tuple layer. Persisted: never renumber.
constexpr uint8_t kNullCode = 0x00;
constexpr uint8_t kBytesCode = 0x01;
constexpr uint8_t kStringCode = 0x02;
constexpr uint8_t kNestedCode = 0x05;
constexpr uint8_t kIntZeroCode = 0x14;  // 0x0C..0x13 negative, 0x15..0x1C positive
constexpr uint8_t kFalseCode = 0x26;
constexpr uint8_t kTrueCode = 0x27;
constexpr uint8_t kVersionstampCode = 0x33;
constexpr uint8_t kEscape = 0xFF;

// The rank of an element's type in tuple order: the order of the type codes.
int TypeRank(const TupleElement::Value& v) {
  switch (v.index()) {
    case 0:
      return kNullCode;
    case 1:
      return kBytesCode;
    case 2:
      return kStringCode;
    case 5:
      return kNestedCode;
    case 3:
      return kIntZeroCode;
    case 4:
      return kFalseCode;  // false and true order by value below
    case 6:
      return kVersionstampCode;
  }
  return 0xFF;
}

// Writes bytes with every 0x00 escaped as 0x00 0xFF, then the 0x00 terminator.
void EncodeEscaped(std::string* out, uint8_t code, std::string_view data) {
  out->push_back(static_cast<char>(code));
  for (char c : data) {
    out->push_back(c);
    if (c == '\0') out->push_back(static_cast<char>(kEscape));
  }
  out->push_back('\0');
}

int ByteLength(uint64_t magnitude) {
  int n = 0;
  while (magnitude != 0) {
    ++n;
    magnitude >>= 8;
  }
  return n;
}

void EncodeInt(std::string* out, int64_t value) {
  if (value == 0) {
    out->push_back(static_cast<char>(kIntZeroCode));
    return;
  }
  uint64_t magnitude = value > 0 ? static_cast<uint64_t>(value)
                                 : ~static_cast<uint64_t>(value) + 1;  // |INT64_MIN| fits
  int n = ByteLength(magnitude);
  // Negative numbers are stored as the one's complement of their magnitude in n bytes, so
  // that a larger (closer to zero) value has larger bytes.
  uint64_t stored =
      value > 0 ? magnitude : (n == 8 ? ~magnitude : ((1ULL << (8 * n)) - 1) ^ magnitude);
  out->push_back(static_cast<char>(value > 0 ? kIntZeroCode + n : kIntZeroCode - n));
  for (int i = n - 1; i >= 0; --i) out->push_back(static_cast<char>((stored >> (8 * i)) & 0xFF));
}

void EncodeElement(std::string* out, const TupleElement& e, bool nested, size_t* versionstamp_pos,
                   int* incomplete_count) {
  const auto& v = e.value();
  switch (v.index()) {
    case 0:
      out->push_back(static_cast<char>(kNullCode));
      if (nested) out->push_back(static_cast<char>(kEscape));
      break;
    case 1:
      EncodeEscaped(out, kBytesCode, std::get<Bytes>(v).data);
      break;
    case 2:
      EncodeEscaped(out, kStringCode, std::get<std::string>(v));
      break;
    case 3:
      EncodeInt(out, std::get<int64_t>(v));
      break;
    case 4:
      out->push_back(static_cast<char>(std::get<bool>(v) ? kTrueCode : kFalseCode));
      break;
    case 5: {
      out->push_back(static_cast<char>(kNestedCode));
      for (const auto& inner : std::get<Tuple>(v).elements()) {
        EncodeElement(out, inner, true, versionstamp_pos, incomplete_count);
      }
      out->push_back('\0');
      break;
    }
    case 6: {
      const auto& vs = std::get<Versionstamp>(v);
      out->push_back(static_cast<char>(kVersionstampCode));
      if (!vs.complete()) {
        ++*incomplete_count;
        *versionstamp_pos = out->size();
      }
      out->append(vs.Bytes12());
      break;
    }
  }
}

Error Corrupt(std::string what) { return Error::Internal("Malformed tuple: " + std::move(what)); }

class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}

  Result<Tuple> DecodeTuple(bool nested) {
    // Bounded recursion: a hostile or corrupt key cannot exhaust the stack.
    if (++depth_ > kMaxNesting) return Corrupt("tuples nested too deeply");
    Tuple t;
    while (pos_ < in_.size()) {
      uint8_t code = static_cast<uint8_t>(in_[pos_]);
      if (nested && code == kNullCode) {
        if (pos_ + 1 < in_.size() && static_cast<uint8_t>(in_[pos_ + 1]) == kEscape) {
          pos_ += 2;
          t.AddNull();
          continue;
        }
        ++pos_;  // end of the nested tuple
        --depth_;
        return t;
      }
      ++pos_;
      FDYNO_ASSIGN_OR_RETURN(TupleElement e, DecodeElement(code));
      t.Add(std::move(e));
    }
    if (nested) return Corrupt("unterminated nested tuple");
    return t;
  }

 private:
  Result<TupleElement> DecodeElement(uint8_t code) {
    if (code == kNullCode) return TupleElement(nullptr);
    if (code == kBytesCode || code == kStringCode) {
      std::string data;
      for (;;) {
        if (pos_ >= in_.size()) return Corrupt("unterminated byte string");
        char c = in_[pos_++];
        if (c != '\0') {
          data.push_back(c);
          continue;
        }
        if (pos_ < in_.size() && static_cast<uint8_t>(in_[pos_]) == kEscape) {
          data.push_back('\0');
          ++pos_;
          continue;
        }
        break;
      }
      if (code == kBytesCode) return TupleElement(Bytes{std::move(data)});
      return TupleElement(std::move(data));
    }
    if (code == kNestedCode) {
      FDYNO_ASSIGN_OR_RETURN(Tuple nested, DecodeTuple(true));
      return TupleElement(std::move(nested));
    }
    if (code >= kIntZeroCode - 8 && code <= kIntZeroCode + 8) {
      int n = code >= kIntZeroCode ? code - kIntZeroCode : kIntZeroCode - code;
      if (pos_ + n > in_.size()) return Corrupt("truncated integer");
      uint64_t stored = 0;
      for (int i = 0; i < n; ++i) stored = (stored << 8) | static_cast<uint8_t>(in_[pos_ + i]);
      pos_ += n;
      if (n == 0) return TupleElement(int64_t{0});
      // Canonical encodings use the fewest bytes; anything else would break ordering.
      if (code > kIntZeroCode) {
        if ((stored >> (8 * (n - 1))) == 0) return Corrupt("non-canonical integer");
        if (stored > static_cast<uint64_t>(INT64_MAX)) return Corrupt("integer out of range");
        return TupleElement(static_cast<int64_t>(stored));
      }
      uint64_t mask = n == 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
      uint64_t magnitude = mask ^ stored;
      if ((magnitude >> (8 * (n - 1))) == 0) return Corrupt("non-canonical integer");
      if (magnitude > (1ULL << 63)) return Corrupt("integer out of range");
      return TupleElement(static_cast<int64_t>(~magnitude + 1));
    }
    if (code == kFalseCode) return TupleElement(false);
    if (code == kTrueCode) return TupleElement(true);
    if (code == kVersionstampCode) {
      if (pos_ + 12 > in_.size()) return Corrupt("truncated versionstamp");
      Versionstamp vs;
      std::memcpy(vs.commit.data(), in_.data() + pos_, 10);
      vs.user = static_cast<uint16_t>((static_cast<uint8_t>(in_[pos_ + 10]) << 8) |
                                      static_cast<uint8_t>(in_[pos_ + 11]));
      pos_ += 12;
      return TupleElement(vs);
    }
    return Corrupt("unknown type code " + std::to_string(code));
  }

  static constexpr int kMaxNesting = 100;
  std::string_view in_;
  size_t pos_ = 0;
  int depth_ = 0;
};

void AppendQuoted(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      out->push_back(static_cast<char>(c));
    } else {
      out->append("\\x");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
    }
  }
}

void AppendElement(std::string* out, const TupleElement& e) {
  const auto& v = e.value();
  switch (v.index()) {
    case 0:
      out->append("null");
      break;
    case 1:
      out->append("b\"");
      AppendQuoted(out, std::get<Bytes>(v).data);
      out->push_back('"');
      break;
    case 2:
      out->push_back('"');
      AppendQuoted(out, std::get<std::string>(v));
      out->push_back('"');
      break;
    case 3:
      out->append(std::to_string(std::get<int64_t>(v)));
      break;
    case 4:
      out->append(std::get<bool>(v) ? "true" : "false");
      break;
    case 5:
      out->append(std::get<Tuple>(v).ToString());
      break;
    case 6: {
      const auto& vs = std::get<Versionstamp>(v);
      out->append("vs(");
      if (vs.complete()) {
        out->append(std::to_string(vs.commit_version()));
        out->push_back(':');
        out->append(std::to_string((vs.commit[8] << 8) | vs.commit[9]));
      } else {
        out->append("incomplete");
      }
      out->push_back(':');
      out->append(std::to_string(vs.user));
      out->push_back(')');
      break;
    }
  }
}

}  // namespace

void AppendPackedInt(std::string* packed, int64_t value) { EncodeInt(packed, value); }

void AppendPackedBytes(std::string* packed, std::string_view bytes) {
  EncodeEscaped(packed, kBytesCode, bytes);
}

Versionstamp Versionstamp::Incomplete(uint16_t user) {
  Versionstamp vs;
  vs.commit.fill(0xFF);
  vs.user = user;
  return vs;
}

Versionstamp Versionstamp::Complete(std::string_view committed, uint16_t user) {
  assert(committed.size() == 10);
  Versionstamp vs;
  std::memcpy(vs.commit.data(), committed.data(), 10);
  vs.user = user;
  return vs;
}

bool Versionstamp::complete() const {
  for (uint8_t b : commit) {
    if (b != 0xFF) return true;
  }
  return false;
}

int64_t Versionstamp::commit_version() const {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | commit[i];
  return static_cast<int64_t>(v);
}

std::string Versionstamp::Bytes12() const {
  std::string s(reinterpret_cast<const char*>(commit.data()), commit.size());
  s.push_back(static_cast<char>(user >> 8));
  s.push_back(static_cast<char>(user & 0xFF));
  return s;
}

Tuple::Tuple(std::initializer_list<TupleElement> elements) : elements_(elements) {}

Tuple& Tuple::AddNull() {
  elements_.emplace_back(nullptr);
  return *this;
}
Tuple& Tuple::AddBytes(std::string_view bytes) {
  elements_.emplace_back(Bytes{std::string(bytes)});
  return *this;
}
Tuple& Tuple::AddString(std::string_view utf8) {
  elements_.emplace_back(std::string(utf8));
  return *this;
}
Tuple& Tuple::AddInt(int64_t value) {
  elements_.emplace_back(value);
  return *this;
}
Tuple& Tuple::AddBool(bool value) {
  elements_.emplace_back(value);
  return *this;
}
Tuple& Tuple::AddTuple(Tuple nested) {
  elements_.emplace_back(std::move(nested));
  return *this;
}
Tuple& Tuple::AddVersionstamp(const Versionstamp& versionstamp) {
  elements_.emplace_back(versionstamp);
  return *this;
}
Tuple& Tuple::Add(TupleElement element) {
  elements_.push_back(std::move(element));
  return *this;
}
Tuple& Tuple::Append(const Tuple& other) {
  elements_.insert(elements_.end(), other.elements_.begin(), other.elements_.end());
  return *this;
}

const TupleElement& Tuple::operator[](size_t i) const {
  assert(i < elements_.size());
  return elements_[i];
}

namespace {
template <typename T>
Result<T> GetAs(const std::vector<TupleElement>& elements, size_t i, const char* type) {
  if (i >= elements.size()) {
    return Corrupt("element " + std::to_string(i) + " missing (size " +
                   std::to_string(elements.size()) + ")");
  }
  if (!elements[i].is<T>()) {
    return Corrupt("element " + std::to_string(i) + " is not " + type);
  }
  return elements[i].get<T>();
}
}  // namespace

Result<int64_t> Tuple::GetInt(size_t i) const { return GetAs<int64_t>(elements_, i, "an integer"); }
Result<std::string> Tuple::GetString(size_t i) const {
  return GetAs<std::string>(elements_, i, "a string");
}
Result<std::string> Tuple::GetBytes(size_t i) const {
  FDYNO_ASSIGN_OR_RETURN(Bytes b, GetAs<Bytes>(elements_, i, "a byte string"));
  return std::move(b.data);
}
Result<bool> Tuple::GetBool(size_t i) const { return GetAs<bool>(elements_, i, "a boolean"); }
Result<Tuple> Tuple::GetTuple(size_t i) const { return GetAs<Tuple>(elements_, i, "a tuple"); }
Result<Versionstamp> Tuple::GetVersionstamp(size_t i) const {
  return GetAs<Versionstamp>(elements_, i, "a versionstamp");
}

std::string Tuple::Pack() const {
  std::string out;
  size_t pos = 0;
  int incomplete = 0;
  for (const auto& e : elements_) EncodeElement(&out, e, false, &pos, &incomplete);
  assert(incomplete == 0 && "use PackWithVersionstamp for incomplete versionstamps");
  return out;
}

Result<std::string> Tuple::PackWithVersionstamp(std::string_view prefix) const {
  std::string out(prefix);
  size_t pos = 0;
  int incomplete = 0;
  for (const auto& e : elements_) EncodeElement(&out, e, false, &pos, &incomplete);
  if (incomplete != 1) {
    return Error::Internal("PackWithVersionstamp needs exactly one incomplete versionstamp, got " +
                           std::to_string(incomplete));
  }
  uint32_t offset = static_cast<uint32_t>(pos);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((offset >> (8 * i)) & 0xFF));
  return out;
}

Result<Tuple> Tuple::Unpack(std::string_view packed) {
  Decoder d(packed);
  return d.DecodeTuple(false);
}

std::string Tuple::ToString() const {
  std::string out = "(";
  for (size_t i = 0; i < elements_.size(); ++i) {
    if (i > 0) out.append(", ");
    AppendElement(&out, elements_[i]);
  }
  if (elements_.size() == 1) out.push_back(',');
  out.push_back(')');
  return out;
}

std::strong_ordering Tuple::operator<=>(const Tuple& other) const {
  size_t n = std::min(elements_.size(), other.elements_.size());
  for (size_t i = 0; i < n; ++i) {
    auto c = elements_[i] <=> other.elements_[i];
    if (c != 0) return c;
  }
  return elements_.size() <=> other.elements_.size();
}

bool Tuple::operator==(const Tuple& other) const { return (*this <=> other) == 0; }

std::strong_ordering TupleElement::operator<=>(const TupleElement& other) const {
  int a = TypeRank(value_);
  int b = TypeRank(other.value_);
  if (a != b) return a <=> b;
  switch (value_.index()) {
    case 0:
      return std::strong_ordering::equal;
    case 1:
      return get<Bytes>() <=> other.get<Bytes>();
    case 2: {
      // Bytewise (unsigned), like the encoding; std::string compares via char_traits, which
      // compares as unsigned char.
      int c = get<std::string>().compare(other.get<std::string>());
      return c <=> 0;
    }
    case 3:
      return get<int64_t>() <=> other.get<int64_t>();
    case 4:
      return get<bool>() <=> other.get<bool>();
    case 5:
      return get<Tuple>() <=> other.get<Tuple>();
    case 6:
      return get<Versionstamp>() <=> other.get<Versionstamp>();
  }
  return std::strong_ordering::equal;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty() && static_cast<uint8_t>(s.back()) == 0xFF) s.pop_back();
  assert(!s.empty() && "PrefixEnd of a key of only 0xFF bytes");
  s.back() = static_cast<char>(static_cast<uint8_t>(s.back()) + 1);
  return s;
}

Subspace Subspace::FromRawPrefix(std::string_view raw_prefix) {
  Subspace s;
  s.prefix_ = std::string(raw_prefix);
  return s;
}

Subspace Subspace::Sub(const Tuple& t) const { return FromRawPrefix(prefix_ + t.Pack()); }

std::string Subspace::Pack(const Tuple& t) const { return prefix_ + t.Pack(); }

Result<std::string> Subspace::PackWithVersionstamp(const Tuple& t) const {
  return t.PackWithVersionstamp(prefix_);
}

Result<Tuple> Subspace::Unpack(std::string_view key) const {
  if (!Contains(key)) return Corrupt("key is outside the subspace");
  return Tuple::Unpack(key.substr(prefix_.size()));
}

bool Subspace::Contains(std::string_view key) const { return key.starts_with(prefix_); }

std::pair<std::string, std::string> Subspace::Range(const Tuple& t) const {
  std::string p = Pack(t);
  return {p + '\x00', p + '\xFF'};
}

}  // namespace fdyno::kv
