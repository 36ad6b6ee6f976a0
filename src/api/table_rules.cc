#include "api/table_rules.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <set>
#include <string>
#include <tuple>

#include "base/utf8.h"

namespace fdyno::api::tables {
namespace {

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

const AttributeIn* FindDefinition(const std::vector<AttributeIn>& defs, const std::string& name) {
  for (const auto& d : defs) {
    if (d.name && *d.name == name) return &d;
  }
  return nullptr;
}

// Whether `ks` is a multi-attribute key: more than one HASH or more than one RANGE element.
bool IsMultiAttributeKey(const std::vector<KeyElementIn>& ks) {
  const auto hashes = std::count_if(ks.begin(), ks.end(),
                                    [](const KeyElementIn& k) { return *k.key_type == "HASH"; });
  return hashes > 1 || static_cast<size_t>(hashes) + 1 < ks.size();
}

// The rules of a multi-attribute global secondary index key: HASH elements first, at most four
// of each type, every attribute once.
Status CheckMultiAttributeKey(const std::vector<KeyElementIn>& ks) {
  std::set<std::string> names;
  size_t hashes = 0, ranges = 0;
  for (const KeyElementIn& k : ks) {
    if (!names.insert(*k.name).second) {
      return Error::Validation("The KeySchema contains multiple key attributes with the same name");
    }
    if (*k.key_type == "HASH") {
      if (ranges > 0) {
        return Invalid(
            "All HASH key attributes must precede RANGE key attributes in the KeySchema");
      }
      ++hashes;
    } else {
      ++ranges;
    }
  }
  if (hashes > model::kMaxKeyAttributesPerRole) {
    return Invalid("The KeySchema exceeds the maximum allowed number of HASH key attributes");
  }
  if (ranges > model::kMaxKeyAttributesPerRole) {
    return Invalid("The KeySchema exceeds the maximum allowed number of RANGE key attributes");
  }
  return Status();
}

// A character DynamoDB allows in tag keys and values.
bool IsValidTagChar(unsigned char c) {
  return std::isalnum(c) || c >= 0x80 || c == ' ' || c == '_' || c == '.' || c == ':' || c == '/' ||
         c == '=' || c == '+' || c == '-' || c == '@';
}

}  // namespace

Error Invalid(std::string_view detail) {
  return Error::Validation(std::string(kInvalid) + std::string(detail));
}

Status CheckNotCreating(const store::TableInfo& t) {
  if (t.status != store::TableStatus::kCreating) return Status::Ok();
  if (!t.replicas.empty()) {  // a replica being added
    return Error::ResourceInUse(
        "Attempt to change a resource which is still in use: Table: " + t.name + " is being used.");
  }
  return Error::ResourceInUse(
      "Attempt to change a resource which is still in use: Table is being created: " + t.name);
}

bool IndexesInFlight(const store::TableInfo& t) {
  auto in_flight = [](const auto& i) { return i.status != store::IndexStatus::kActive; };
  return std::any_of(t.global_indexes.begin(), t.global_indexes.end(), in_flight) ||
         std::any_of(t.vector_indexes.begin(), t.vector_indexes.end(), in_flight);
}

Status CheckNotUpdating(const store::TableInfo& t) {
  const bool settled = t.status != store::TableStatus::kUpdating && !IndexesInFlight(t) &&
                       std::all_of(t.replicas.begin(), t.replicas.end(), [](const auto& r) {
                         return r.status == store::ReplicaStatus::kActive;
                       });
  if (settled) return Status::Ok();
  return Error::ResourceInUse("The resource which you are attempting to change is in use.");
}

Status CheckCapacityBounds(const ThroughputIn& t) {
  if (*t.read > kMaxCapacityUnits) {
    return Error::Validation("Given value " + std::to_string(*t.read) +
                             " for ReadCapacityUnits is out of bounds");
  }
  if (*t.write > kMaxCapacityUnits) {
    return Error::Validation("Given value " + std::to_string(*t.write) +
                             " for WriteCapacityUnits is out of bounds");
  }
  return Status::Ok();
}

Status CheckCapacityLimit(const ThroughputIn& t, std::string_view region, std::string_view index) {
  const std::pair<const char*, int64_t> units[] = {{"ReadCapacityUnits", *t.read},
                                                   {"WriteCapacityUnits", *t.write}};
  for (const auto& [name, value] : units) {
    if (value <= kTableMaxCapacityUnits) continue;
    const std::string what = index.empty() ? "" : " for index " + std::string(index);
    return Error::Make(ErrorType::kLimitExceeded,
                       "The requested " + std::string(name) + what + ", " + std::to_string(value) +
                           ", is above the per " + (index.empty() ? "table" : "index") +
                           " maximum for the account in " + std::string(region) +
                           ". Per table maximum: " + std::to_string(kTableMaxCapacityUnits) +
                           ". Refer to the Amazon DynamoDB Developer Guide for current limits and "
                           "how to request higher limits.");
  }
  return Status::Ok();
}

Status CheckOnDemandLimit(const OnDemandIn& in, std::string_view region, std::string_view index) {
  const std::tuple<const char*, const char*, std::optional<int64_t>> maximums[] = {
      {"MaxReadRequestUnits", "TableMaxReadCapacityUnits", in.max_read},
      {"MaxWriteRequestUnits", "TableMaxWriteCapacityUnits", in.max_write}};
  for (const auto& [name, quota, value] : maximums) {
    if (!value || *value <= kTableMaxCapacityUnits) continue;
    const std::string subject = index.empty() ? "table" : "index : " + std::string(index);
    return Error::Make(ErrorType::kLimitExceeded,
                       "Subscriber limit exceeded: Requested " + std::string(name) +
                           " for OnDemandThroughput for " + subject + " exceeds " + quota +
                           " of the account in region " + std::string(region));
  }
  return Status::Ok();
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out + "]";
}

// The definitions of a request whose constraints passed (names present, types valid).
std::vector<store::AttributeDefinition> TypedDefinitions(const std::vector<AttributeIn>& defs) {
  std::vector<store::AttributeDefinition> out;
  for (const AttributeIn& d : defs) out.push_back({*d.name, *store::ParseScalarType(*d.type)});
  return out;
}

std::vector<std::string> DefinitionNames(const std::vector<AttributeIn>& defs) {
  std::vector<std::string> out;
  for (const auto& d : defs) out.push_back(d.name.value_or(""));
  return out;
}

std::vector<std::string> KeyNames(const std::vector<KeyElementIn>& ks) {
  std::vector<std::string> out;
  for (const auto& k : ks) out.push_back(k.name.value_or(""));
  return out;
}

Result<store::KeySchema> ResolveKeySchema(const std::vector<KeyElementIn>& ks,
                                          const std::vector<AttributeIn>& defs,
                                          bool multi_attribute_ok) {
  for (const auto& k : ks) {
    if (FindDefinition(defs, *k.name) == nullptr) {
      return Invalid("Some index key attributes are not defined in AttributeDefinitions. Keys: " +
                     JoinNames(KeyNames(ks)) +
                     ", AttributeDefinitions: " + JoinNames(DefinitionNames(defs)));
    }
  }
  auto attr = [&](const KeyElementIn& k) {
    const AttributeIn* d = FindDefinition(defs, *k.name);
    return store::AttributeDefinition{*k.name, *store::ParseScalarType(*d->type)};
  };
  if (multi_attribute_ok && *ks[0].key_type == "HASH" && IsMultiAttributeKey(ks)) {
    FDYNO_RETURN_IF_ERROR(CheckMultiAttributeKey(ks));
    store::KeySchema out;
    out.hash = attr(ks[0]);
    for (size_t i = 1; i < ks.size(); ++i) {
      if (*ks[i].key_type == "HASH") {
        out.more_hash.push_back(attr(ks[i]));
      } else if (!out.range) {
        out.range = attr(ks[i]);
      } else {
        out.more_range.push_back(attr(ks[i]));
      }
    }
    return out;
  }
  if (ks.size() == 2 && *ks[0].name == *ks[1].name) {
    return Error::Validation(
        "Both the Hash Key and the Range Key element in the KeySchema have the same name");
  }
  if (*ks[0].key_type != "HASH") {
    return Error::Validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (ks.size() == 2 && *ks[1].key_type != "RANGE") {
    return Error::Validation(
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
  }
  store::KeySchema out;
  out.hash = attr(ks[0]);
  if (ks.size() == 2) out.range = attr(ks[1]);
  return out;
}

Status CheckTagKey(std::string_view key) {
  if (key.empty() || Utf16Length(key) > 128 ||
      !std::all_of(key.begin(), key.end(), [](char c) { return IsValidTagChar(c); })) {
    return Error::Validation("The Tag Key provided is invalid, Key: " + std::string(key));
  }
  const bool aws = key.size() >= 4 && std::tolower(static_cast<unsigned char>(key[0])) == 'a' &&
                   std::tolower(static_cast<unsigned char>(key[1])) == 'w' &&
                   std::tolower(static_cast<unsigned char>(key[2])) == 's' && key[3] == ':';
  if (!aws) return Status::Ok();
  return Error::Validation("Tag Key cannot be prefixed with aws:, Key: " + std::string(key));
}

Result<std::vector<store::Tag>> ResolveTags(const std::vector<TagIn>& in) {
  std::vector<store::Tag> out;
  std::set<std::string> seen;
  for (const TagIn& t : in) {
    if (!t.key) return Error::Validation("The Tag Key provided is invalid, Key: null");
    const std::string& key = *t.key;
    FDYNO_RETURN_IF_ERROR(CheckTagKey(key));
    if (!t.value || Utf16Length(*t.value) > 256 ||
        !std::all_of(t.value->begin(), t.value->end(), [](char c) { return IsValidTagChar(c); })) {
      return Error::Validation("The Tag Value provided is invalid, Value: " +
                               t.value.value_or("null"));
    }
    if (!seen.insert(key).second) {
      return Error::Validation("Duplicate Tag Keys provided as input: Duplicate Tag Key found " +
                               key);
    }
    out.push_back({key, *t.value});
  }
  return out;
}

Error IndexAlreadyExists() {
  return Error::Validation("Attempting to create an index which already exists");
}

Error TooManyTags() {
  return Error::Validation("Number of Tags exceed the current limit for the provided ResourceArn");
}

std::optional<store::StreamViewType> ParseViewType(std::string_view s) {
  if (s == "NEW_IMAGE") return store::StreamViewType::kNewImage;
  if (s == "OLD_IMAGE") return store::StreamViewType::kOldImage;
  if (s == "NEW_AND_OLD_IMAGES") return store::StreamViewType::kNewAndOldImages;
  if (s == "KEYS_ONLY") return store::StreamViewType::kKeysOnly;
  return std::nullopt;
}

std::optional<store::TableClass> ParseTableClass(std::string_view s) {
  if (s == "STANDARD") return store::TableClass::kStandard;
  if (s == "STANDARD_INFREQUENT_ACCESS") return store::TableClass::kStandardInfrequentAccess;
  return std::nullopt;
}

Error InvalidTableClass() {
  return Error::Validation(
      "Invalid table-class parameter provided. Please try again with a valid table-class value: "
      "[STANDARD, STANDARD_INFREQUENT_ACCESS].");
}

bool SseEnabled(const SseIn& sse) { return sse.enabled ? *sse.enabled : sse.sse_type.has_value(); }

Status CheckSse(const SseIn& sse) {
  const bool disabled = sse.enabled && !*sse.enabled;
  if (disabled && sse.sse_type) return Invalid("SSEType can not be specified if Enabled is false");
  if (!SseEnabled(sse) && sse.kms_key) {
    return Invalid("KMSMasterKeyId can not be specified if Enabled is false");
  }
  if (sse.sse_type && *sse.sse_type == "AES256") return Invalid("SSEType AES256 is not supported");
  if (sse.kms_key && !sse.sse_type)
    return Invalid("SSEType KMS is required if KMSMasterKeyId is specified");
  return Status::Ok();
}

Status CheckOnDemand(const OnDemandIn& in, bool on_demand, bool update, std::string_view index) {
  const std::pair<const char*, std::optional<int64_t>> maximums[] = {
      {"MaxReadRequestUnits", in.max_read}, {"MaxWriteRequestUnits", in.max_write}};
  // DynamoDB's wording differs between CreateTable and UpdateTable.
  const std::string of_index =
      index.empty() ? "" : (update ? "for index : " : "for index: ") + std::string(index) + " ";
  for (const auto& [name, value] : maximums) {
    if (value && !on_demand) {
      return Invalid(
          std::string(name) + " for OnDemandThroughput " + of_index + "cannot be specified when " +
          (update ? "the table BillingMode is PROVISIONED" : "table BillingMode is PROVISIONED."));
    }
  }
  const std::string subject = index.empty() ? "table" : "index : " + std::string(index);
  for (const auto& [name, value] : maximums) {
    if (value && *value < 1 && !(update && *value == -1)) {
      return Invalid("Requested " + std::string(name) + " for OnDemandThroughput for " + subject +
                     " is outside of valid range");
    }
  }
  return Status::Ok();
}

std::string StreamLabel(int64_t wall_ms) {
  std::time_t secs = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(wall_ms % 1000));
  return buf;
}

std::string NextStreamLabel(const std::string& previous, int64_t now_ms) {
  std::string label = StreamLabel(now_ms);
  if (label <= previous) label = StreamLabel(std::max(now_ms, LabelMillis(previous)) + 1);
  return label;
}

int64_t LabelMillis(const std::string& label) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(label.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

}  // namespace fdyno::api::tables
