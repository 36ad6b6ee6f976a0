// libFuzzer target for transaction request decoding: DecodeTransactWriteItems and
// DecodeTransactGetItems (api/transact_request.h) and ExecuteTransaction's
// DecodeExecuteTransaction (api/transact_ops.cc), with the fingerprints of the decoded writes
// that ClientRequestToken records keep. The first byte picks the decoder, the rest is the body,
// admitted as the router admits it (api_body.h). Invariants: no crash, no sanitizer report,
// every decoding error a ValidationException or SerializationException; a decoded request has 1
// to 100 actions (statements), each with its table, an Update its resolved update, a condition
// expression its resolved condition; its fingerprint (algorithm 1) is computed, is
// the same when computed again, and is the same for the request without its ClientRequestToken.
//
// DecodeExecuteTransaction is internal to transact_ops.cc, so this file includes transact_ops.cc:
// its definitions are this program's own, and the linker never takes transact_ops.cc's object
// out of libfdyno_api.a, since this file already defines every symbol it would bring.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/transact_request.h"
#include "api_body.h"
#include "store/tokens.h"
// The file under test, last: see the header comment.
#include "api/transact_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;

constexpr uint32_t kAlgorithm = store::kFingerprintSha256CanonicalV1;

// The body without its ClientRequestToken, decoded again with `decode`: the same request, so
// `fingerprint` gives it the same fingerprint.
template <typename Decode, typename Fingerprint>
void CheckTokenNotFingerprinted(rapidjson::Document& doc, const std::string& fingerprint,
                                Decode decode, Fingerprint fingerprint_of) {
  if (!fuzz::EraseMembers(doc, "ClientRequestToken")) return;
  auto again = decode(doc);
  Require(again.ok());
  Result<std::string> other = fingerprint_of(*again);
  Require(other.ok() && *other == fingerprint);
}

void FuzzWrite(rapidjson::Document& doc) {
  Result<TransactWriteRequest> r = DecodeTransactWriteItems(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->actions.empty() && r->actions.size() <= kMaxTransactActions);
  for (const TransactWriteAction& a : r->actions) {
    Require(!a.table_name.empty());
    Require(a.condition_expression.has_value() == a.condition.has_value());
    Require(a.update_expression.has_value() == a.update.has_value());
    Require((a.kind == TransactActionKind::kUpdate) == a.update.has_value());
    if (a.kind == TransactActionKind::kConditionCheck) Require(a.condition.has_value());
  }
  Result<std::string> fingerprint = TransactWriteFingerprint(*r, kAlgorithm);
  Require(fingerprint.ok() && !fingerprint->empty());
  Result<std::string> again = TransactWriteFingerprint(*r, kAlgorithm);
  Require(again.ok() && *again == *fingerprint);
  CheckTokenNotFingerprinted(
      doc, *fingerprint,
      [](const rapidjson::Value& body) { return DecodeTransactWriteItems(body); },
      [](const TransactWriteRequest& w) { return TransactWriteFingerprint(w, kAlgorithm); });
}

void FuzzGet(const rapidjson::Document& doc) {
  Result<TransactGetRequest> r = DecodeTransactGetItems(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->actions.empty() && r->actions.size() <= kMaxTransactActions);
  for (const TransactGetAction& a : r->actions) Require(!a.table_name.empty());
}

void FuzzExecuteTransaction(rapidjson::Document& doc) {
  Result<ExecuteTransactionRequest> r = DecodeExecuteTransaction(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->statements.empty() && r->statements.size() <= kMaxTransactActions);
  for (const TransactStatement& st : r->statements) {
    Require(!st.statement.empty());
    Require(st.has_parameters == !st.parameters.empty());
  }
  Result<std::string> fingerprint = ExecuteTransactionFingerprint(*r, kAlgorithm);
  Require(fingerprint.ok() && !fingerprint->empty());
  CheckTokenNotFingerprinted(
      doc, *fingerprint,
      [](const rapidjson::Value& body) { return DecodeExecuteTransaction(body); },
      [](const ExecuteTransactionRequest& e) {
        return ExecuteTransactionFingerprint(e, kAlgorithm);
      });
}

void FuzzTransact(const uint8_t* data, size_t size) {
  if (size == 0) return;
  rapidjson::Document doc;
  if (!fuzz::ParseBody({reinterpret_cast<const char*>(data) + 1, size - 1}, doc)) return;
  switch (data[0] % 3) {
    case 0:
      return FuzzWrite(doc);
    case 1:
      return FuzzGet(doc);
    default:
      return FuzzExecuteTransaction(doc);
  }
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzTransact(data, size);
  return 0;
}
