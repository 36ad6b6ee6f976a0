// libFuzzer target for the DynamoDB Streams API's requests (api/stream_ops.cc): shard iterators
// as clients send them back (DecodeIterator), GetRecords up to the point where it would read
// the database, and the requests of ListStreams, DescribeStream and GetShardIterator with the
// stream ARNs, shard ids and sequence numbers in them. The first byte picks the variant: an
// iterator as text, an iterator whose payload (before base64) is the input, a ListStreams,
// DescribeStream or GetShardIterator body, or a GetRecords body; bodies are admitted as the
// router admits them (api_body.h). Invariants: no crash, no sanitizer report; every error is a
// client error (ValidationException, SerializationException, or ExpiredIteratorException); a
// decoded iterator encodes back to one that decodes to the same fields; GetRecords refuses an
// iterator that does not decode, is another account's, or was issued more than 15 minutes ago (in
// exact arithmetic) without reading; a ListStreams request has a Limit of 1 to 100; a shard id or
// sequence number that parses is spelled as one that parses back to the same.
//
// GetRecords is called only with iterators it must refuse before it reads (the harness decodes
// them first): there is no database here, and a live iterator would read one.
//
// The functions are internal to stream_ops.cc (no header declares them), so this file includes
// stream_ops.cc: its definitions are this program's own, and the linker never takes
// stream_ops.cc's object out of libfdyno_api.a, since this file already defines every symbol it
// would bring.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api_body.h"
#include "base/clock.h"
#include "model/base64.h"
// The file under test, last: see the header comment.
#include "api/stream_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;

constexpr int64_t kNowMs = 1'700'000'000'000;

const StreamView& TheStream() {
  static const StreamView* view = [] {
    auto* v = new StreamView;
    v->info.id = 5;
    v->info.table_name = "tbl";
    v->info.label = "2023-11-14T22:13:20.000";
    return v;
  }();
  return *view;
}

bool SameIterator(const Iterator& a, const Iterator& b) {
  return a.account == b.account && a.stream_id == b.stream_id && a.generation == b.generation &&
         a.slot == b.slot && a.position == b.position && a.inclusive == b.inclusive &&
         a.issued_ms == b.issued_ms;
}

void CheckIterator(std::string_view text) {
  Result<Iterator> it = DecodeIterator(text);
  if (!it.ok()) return Require(it.error().type == ErrorType::kValidation);
  const RequestContext ctx;
  Result<Iterator> again = DecodeIterator(EncodeIterator(ctx, TheStream(), *it));
  Require(again.ok() && SameIterator(*it, *again));
}

// GetRecords, when the iterator it names is one it must refuse before reading.
void CheckGetRecords(const rapidjson::Value& body) {
  const RequestContext ctx;
  const Value* text = Member(body, "ShardIterator");
  if (text != nullptr && text->IsString()) {
    Result<Iterator> it = DecodeIterator(AsStringView(*text));
    if (it.ok() && it->account == ctx.account_id &&
        static_cast<__int128>(kNowMs) - it->issued_ms <= kIteratorLifetimeMs) {
      return;  // live: GetRecords would read the database
    }
  }
  ManualClock clock(kNowMs);
  Services services;
  services.clock = &clock;
  Result<std::string> r = GetRecords(services, ctx, body);
  Require(!r.ok());
  Require(r.error().type == ErrorType::kValidation || r.error().type == ErrorType::kSerialization ||
          r.error().type == ErrorType::kExpiredIterator);
}

void CheckRequests(const rapidjson::Value& body) {
  Result<ListStreamsRequest> list = ParseListStreams(body);
  if (list.ok()) {
    Require(list->max >= 1 && list->max <= 100);
    Require(!list->table || (list->table->size() >= 3 && list->table->size() <= 255));
  } else {
    RequireClientError(list.error());
  }
  Result<DescribeRequest> describe = ParseDescribeStream(body);
  if (describe.ok()) {
    Require(describe->limit >= 1 && describe->limit <= 100);
  } else {
    RequireClientError(describe.error());
  }
  Result<IteratorRequest> request = ParseGetShardIterator(body);
  if (!request.ok()) return RequireClientError(request.error());
  const bool needs_sequence =
      request->type == "AT_SEQUENCE_NUMBER" || request->type == "AFTER_SEQUENCE_NUMBER";
  Require(request->sequence.has_value() == needs_sequence);
  if (request->sequence) {
    std::optional<Position> back =
        store::ParseSequenceNumber(store::SequenceNumber(*request->sequence));
    Require(back && *back == *request->sequence);
  }
  const RequestContext ctx;
  if (auto arn = ParseStreamArn(ctx, request->arn)) {
    Require(!arn->first.empty() && !arn->second.empty());
  }
  if (std::optional<store::ShardRef> shard = store::ParseShardId(request->shard_id)) {
    store::Generation generation;
    generation.number = shard->generation;
    generation.start_ms = kNowMs;
    std::optional<store::ShardRef> back =
        store::ParseShardId(store::ShardId(generation, shard->slot));
    Require(back && back->generation == shard->generation && back->slot == shard->slot);
  }
}

void FuzzStreams(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      return CheckIterator(rest);
    case 1: {
      const RequestContext ctx;
      const std::string text = StreamArn(ctx, TheStream().info) + "|1|" + model::Base64Encode(rest);
      CheckIterator(text);
      rapidjson::Document body(rapidjson::kObjectType);
      body.AddMember("ShardIterator",
                     rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()),
                                      body.GetAllocator()),
                     body.GetAllocator());
      return CheckGetRecords(body);
    }
    default: {
      rapidjson::Document doc;
      if (!fuzz::ParseBody(rest, doc)) return;
      if (data[0] % 4 == 2) return CheckRequests(doc);
      return CheckGetRecords(doc);
    }
  }
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzStreams(data, size);
  return 0;
}
