#include "store/policies.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "store/catalog.h"

namespace fdyno::store {
namespace {

constexpr uint8_t kPolicyRecordVersion = 1;

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt resource policy record: " + std::string(what));
}

}  // namespace

std::string EncodePolicy(const PolicyRecord& r) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("document");
  w.String(r.document.data(), static_cast<rapidjson::SizeType>(r.document.size()));
  w.Key("version_given");
  w.Bool(r.version_given);
  w.Key("revision_ms");
  w.Int64(r.revision_ms);
  w.Key("deleted");
  w.Bool(r.deleted);
  w.EndObject();
  std::string out(1, static_cast<char>(kPolicyRecordVersion));
  out.append(buf.GetString(), buf.GetSize());
  return out;
}

Result<PolicyRecord> DecodePolicy(std::string_view bytes) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kPolicyRecordVersion) {
    return Corrupt("unknown version");
  }
  rapidjson::Document d;
  d.Parse(bytes.data() + 1, bytes.size() - 1);
  if (d.HasParseError() || !d.IsObject()) return Corrupt("not a JSON object");
  const rapidjson::Value& doc = d;
  auto member = [&](const char* name) -> const rapidjson::Value* {
    auto it = doc.FindMember(name);
    return it == doc.MemberEnd() ? nullptr : &it->value;
  };
  const rapidjson::Value* document = member("document");
  const rapidjson::Value* given = member("version_given");
  const rapidjson::Value* revision = member("revision_ms");
  const rapidjson::Value* deleted = member("deleted");
  if (document == nullptr || !document->IsString() || given == nullptr || !given->IsBool() ||
      revision == nullptr || !revision->IsInt64() || deleted == nullptr || !deleted->IsBool() ||
      d.MemberCount() != 4) {
    return Corrupt("members");
  }
  return PolicyRecord{std::string(document->GetString(), document->GetStringLength()),
                      given->GetBool(), revision->GetInt64(), deleted->GetBool()};
}

Result<std::optional<PolicyRecord>> ReadPolicy(kv::Transaction& txn, int64_t table_id,
                                               std::string_view slot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                         txn.Get(Catalog::PolicyKey(table_id, slot)));
  if (!bytes) return std::optional<PolicyRecord>();
  FDYNO_ASSIGN_OR_RETURN(PolicyRecord record, DecodePolicy(*bytes));
  return std::optional<PolicyRecord>(std::move(record));
}

void WritePolicy(kv::Transaction& txn, int64_t table_id, std::string_view slot,
                 const PolicyRecord& record) {
  txn.Set(Catalog::PolicyKey(table_id, slot), EncodePolicy(record));
}

}  // namespace fdyno::store
