// Tuples and subspaces: order-preserving keys in FoundationDB's tuple-layer byte format
// (docs/format/tuple.md). Packed tuples sort bytewise in the same order as the tuples
// themselves (element by element; a prefix sorts first), so ranges of keys are ranges of
// tuples. The format is persisted in every key fdyno writes: it must never change.
//
// Supported element types (type codes, persisted): null (0x00), byte string (0x01), unicode
// string (0x02), nested tuple (0x05), 64-bit signed integer (0x0C..0x1C), false/true
// (0x26/0x27) and 96-bit versionstamp (0x33). Decoding anything else fails closed.
//
// Thread-safety: values; no shared state.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/result.h"

namespace fdyno::kv {

// A byte string element (type 0x01), distinct from a unicode string (0x02).
struct Bytes {
  std::string data;
  auto operator<=>(const Bytes&) const = default;
};

// A 12-byte versionstamp: the 10-byte commit versionstamp plus 2 user bytes (big-endian).
// An incomplete versionstamp has the commit part unknown (0xFF x 10) and is filled in by
// SetVersionstampedKey/Value at commit; see Tuple::PackWithVersionstamp.
struct Versionstamp {
  std::array<uint8_t, 10> commit{};  // 8-byte commit version (BE) + 2-byte batch order (BE)
  uint16_t user = 0;

  static Versionstamp Incomplete(uint16_t user = 0);
  // REQUIRES: committed.size() == 10 (as returned by Transaction::GetVersionstamp).
  static Versionstamp Complete(std::string_view committed, uint16_t user = 0);
  bool complete() const;
  int64_t commit_version() const;  // the 8-byte commit version
  std::string Bytes12() const;     // the 12 bytes as stored
  auto operator<=>(const Versionstamp&) const = default;
};

class TupleElement;

// An ordered list of elements. Build with the Add* methods (chainable) or an initializer list.
class Tuple {
 public:
  Tuple() = default;
  Tuple(std::initializer_list<TupleElement> elements);

  Tuple& AddNull();
  Tuple& AddBytes(std::string_view bytes);
  Tuple& AddString(std::string_view utf8);
  Tuple& AddInt(int64_t value);
  Tuple& AddBool(bool value);
  Tuple& AddTuple(Tuple nested);
  Tuple& AddVersionstamp(const Versionstamp& versionstamp);
  Tuple& Add(TupleElement element);
  // Appends every element of other.
  Tuple& Append(const Tuple& other);

  // Defined after TupleElement, which must be complete there (clang requires it).
  size_t size() const;
  bool empty() const;
  const TupleElement& operator[](size_t i) const;
  const std::vector<TupleElement>& elements() const { return elements_; }

  // Typed accessors; an error when the index is out of range or the type differs. Meant for
  // decoding stored keys, where a mismatch is corruption, not a programmer error.
  Result<int64_t> GetInt(size_t i) const;
  Result<std::string> GetString(size_t i) const;
  Result<std::string> GetBytes(size_t i) const;
  Result<bool> GetBool(size_t i) const;
  Result<Tuple> GetTuple(size_t i) const;
  Result<Versionstamp> GetVersionstamp(size_t i) const;

  // The packed bytes. REQUIRES: no incomplete versionstamp (use PackWithVersionstamp).
  std::string Pack() const;
  // Packs a tuple holding exactly one incomplete versionstamp for SetVersionstampedKey or
  // SetVersionstampedValue: the packed bytes, then the 4-byte little-endian offset of the
  // 10-byte placeholder. `prefix` is prepended (and counted in the offset).
  Result<std::string> PackWithVersionstamp(std::string_view prefix = {}) const;
  // Decodes packed bytes; fails (InternalServerError naming the problem) on any malformed
  // input, unknown type code or trailing bytes.
  static Result<Tuple> Unpack(std::string_view packed);

  // A human-readable rendering for logs and test failures, e.g. ("a", 1, b"\x00").
  std::string ToString() const;

  // Tuple order: element-wise, a prefix first; equals the order of Pack().
  std::strong_ordering operator<=>(const Tuple& other) const;
  bool operator==(const Tuple& other) const;

 private:
  std::vector<TupleElement> elements_;
};

// A packed tuple is its elements' encodings one after another: these append one element's
// encoding to packed bytes, for keys built on a hot path without a Tuple (store::ItemKey).
// AppendPackedInt(&k, 1) after k = Tuple{a}.Pack() gives Tuple{a, 1}.Pack().
void AppendPackedInt(std::string* packed, int64_t value);
void AppendPackedBytes(std::string* packed, std::string_view bytes);

// One element of a tuple.
class TupleElement {
 public:
  using Value =
      std::variant<std::nullptr_t, Bytes, std::string, int64_t, bool, Tuple, Versionstamp>;

  TupleElement() : value_(nullptr) {}
  TupleElement(std::nullptr_t) : value_(nullptr) {}             // NOLINT: implicit by design
  TupleElement(Bytes b) : value_(std::move(b)) {}               // NOLINT
  TupleElement(std::string s) : value_(std::move(s)) {}         // NOLINT
  TupleElement(std::string_view s) : value_(std::string(s)) {}  // NOLINT
  TupleElement(const char* s) : value_(std::string(s)) {}       // NOLINT
  TupleElement(int64_t v) : value_(v) {}                        // NOLINT
  TupleElement(int v) : value_(static_cast<int64_t>(v)) {}      // NOLINT
  TupleElement(bool v) : value_(v) {}                           // NOLINT
  TupleElement(Tuple t) : value_(std::move(t)) {}               // NOLINT
  TupleElement(Versionstamp v) : value_(v) {}                   // NOLINT

  const Value& value() const { return value_; }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(value_);
  }
  template <typename T>
  const T& get() const {
    return std::get<T>(value_);
  }

  std::strong_ordering operator<=>(const TupleElement& other) const;
  bool operator==(const TupleElement& other) const { return (*this <=> other) == 0; }

 private:
  Value value_;
};

// The first key after every key that starts with `prefix` (FoundationDB's strinc): drops
// trailing 0xFF bytes and increments the last byte. REQUIRES: prefix has a byte != 0xFF.
std::string PrefixEnd(std::string_view prefix);

// A key prefix under which a component keeps its keys, as packed tuples.
class Subspace {
 public:
  Subspace() = default;
  explicit Subspace(const Tuple& prefix) : prefix_(prefix.Pack()) {}
  // A subspace from raw prefix bytes followed by a packed tuple.
  Subspace(std::string_view raw_prefix, const Tuple& prefix)
      : prefix_(std::string(raw_prefix) + prefix.Pack()) {}
  static Subspace FromRawPrefix(std::string_view raw_prefix);

  const std::string& key() const { return prefix_; }
  // The subspace for prefix + t.
  Subspace Sub(const Tuple& t) const;
  // prefix + packed t.
  std::string Pack(const Tuple& t = {}) const;
  // PackWithVersionstamp with this prefix (offset includes the prefix).
  Result<std::string> PackWithVersionstamp(const Tuple& t) const;
  // The tuple after the prefix; an error if the key is outside the subspace or malformed.
  Result<Tuple> Unpack(std::string_view key) const;
  bool Contains(std::string_view key) const;
  // [prefix + t + 0x00, prefix + t + 0xFF): every key strictly inside prefix + t.
  std::pair<std::string, std::string> Range(const Tuple& t = {}) const;

 private:
  std::string prefix_;
};

inline size_t Tuple::size() const { return elements_.size(); }
inline bool Tuple::empty() const { return elements_.empty(); }

}  // namespace fdyno::kv
