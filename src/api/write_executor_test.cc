#include "api/write_executor.h"

#include <gtest/gtest.h>

#include "base/clock.h"
#include "expr/parser.h"
#include "expr/resolver.h"
#include "kv/testing/memory_engine.h"
#include "model/number.h"
#include "model/test_values.h"
#include "store/layout.h"

namespace fdyno::api {
namespace {

using test::N;
using test::S;

using model::AttributeValue;
using model::Item;

expr::Update UpdateOf(const std::string& text) {
  expr::ResolveContext ctx(nullptr, nullptr);
  return *ctx.ResolveUpdate(*expr::ParseUpdate(text));
}

expr::Condition ConditionOf(const std::string& text) {
  expr::ResolveContext ctx(nullptr, nullptr);
  return *ctx.ResolveCondition(*expr::ParseCondition(text, expr::ExpressionKind::kCondition),
                               expr::ExpressionKind::kCondition);
}

// pk (S), a global secondary index on g (S).
class WriteExecutorTest : public ::testing::Test {
 protected:
  WriteExecutorTest() : db_(kv::OpenMemoryEngine()) {
    table_.name = "t";
    table_.id = 7;
    table_.key_schema.hash = {"pk", model::ScalarType::kS};
    store::SecondaryIndex gsi;
    gsi.name = "by_g";
    gsi.id = 1;
    gsi.key_schema.hash = {"g", model::ScalarType::kS};
    table_.global_indexes.push_back(gsi);
  }

  // Runs steps 2 and 3 on the item `stored` (absent when empty) for `action`.
  Result<Evaluation> EvaluateOn(const Item& stored, const WriteAction& action) {
    auto tx = db_->CreateTransaction();
    if (!stored.empty()) {
      store::Mutation m({});
      m.Stage(table_, *ReadAction(*tx, table_, {.kind = WriteKind::kPut, .item = &stored}), stored);
      EXPECT_TRUE(m.Write(*tx)->ok());
    }
    FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current, ReadAction(*tx, table_, action));
    return Evaluate(table_, action, current);
  }

  std::unique_ptr<kv::Database> db_;
  store::TableInfo table_;
  const Item key_{{"pk", S("a")}};
};

TEST_F(WriteExecutorTest, AnUpdateOfTheKeyIsRefusedBeforeAnythingIsRead) {
  const expr::Update update = UpdateOf("SET x = pk, pk = x");
  Status st = CheckAction(table_, {.kind = WriteKind::kUpdate, .item = &key_, .update = &update});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "One or more parameter values were invalid: Cannot update attribute pk. This "
            "attribute is part of the key");
}

TEST_F(WriteExecutorTest, APutWhoseIndexKeyHasTheWrongTypeCarriesItsCause) {
  const Item item{{"pk", S("a")}, {"g", N(1)}};
  Status st = CheckAction(table_, {.kind = WriteKind::kPut, .item = &item});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().cause, ErrorCause::kIndexKeyMismatch);
}

TEST_F(WriteExecutorTest, AnUpdateThatOnlyRemovesLeavesAMissingItemMissing) {
  const expr::Update update = UpdateOf("REMOVE x.y");
  Result<Evaluation> e =
      EvaluateOn({}, {.kind = WriteKind::kUpdate, .item = &key_, .update = &update});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_FALSE(e->next);
  EXPECT_TRUE(e->stages);
}

TEST_F(WriteExecutorTest, AnUpdateOfAMissingItemStartsFromItsKey) {
  const expr::Update update = UpdateOf("SET x = pk");
  Result<Evaluation> e =
      EvaluateOn({}, {.kind = WriteKind::kUpdate, .item = &key_, .update = &update});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(*e->next, (Item{{"pk", S("a")}, {"x", S("a")}}));
}

TEST_F(WriteExecutorTest, AnUpdateGivingAnIndexKeyTheWrongTypeIsRefused) {
  const expr::Update update = UpdateOf("SET g = x");
  Result<Evaluation> e = EvaluateOn({{"pk", S("a")}, {"x", N(1)}},
                                    {.kind = WriteKind::kUpdate, .item = &key_, .update = &update});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().cause, ErrorCause::kIndexKeyMismatch);
}

TEST_F(WriteExecutorTest, AFalseConditionCarriesTheItemOnlyWhenAskedAndStagesNothing) {
  const Item stored{{"pk", S("a")}, {"x", N(1)}};
  const expr::Condition condition = ConditionOf("attribute_not_exists(pk)");
  for (bool ask : {false, true}) {
    Result<Evaluation> e = EvaluateOn(stored, {.kind = WriteKind::kDelete,
                                               .item = &key_,
                                               .condition = &condition,
                                               .return_old_on_condition_failure = ask});
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE(e->failure);
    EXPECT_FALSE(e->stages);
    EXPECT_EQ(e->failure->Code(), "ConditionalCheckFailed");
    EXPECT_EQ(e->failure->item.has_value(), ask);
    const Error error = e->failure->ToError();
    EXPECT_EQ(error.type, ErrorType::kConditionalCheckFailed);
    EXPECT_EQ(!error.item_json.empty(), ask);
  }
}

TEST_F(WriteExecutorTest, AFalseConditionOfAnInsertIsADuplicateItem) {
  const Item stored{{"pk", S("a")}};
  const expr::Condition condition = ConditionOf("attribute_not_exists(pk)");
  Result<Evaluation> e = EvaluateOn(stored, {.kind = WriteKind::kPut,
                                             .item = &stored,
                                             .condition = &condition,
                                             .duplicate_on_false = true});
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->failure);
  EXPECT_EQ(e->failure->Code(), "DuplicateItem");
  EXPECT_EQ(e->failure->ToError().type, ErrorType::kDuplicateItem);
}

TEST_F(WriteExecutorTest, AConditionCheckStagesNothing) {
  Result<Evaluation> e = EvaluateOn({}, {.kind = WriteKind::kConditionCheck, .item = &key_});
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->failure);
  EXPECT_FALSE(e->stages);
}

TEST_F(WriteExecutorTest, AReceiptIsReadOnlyAfterAnAttemptWhoseOutcomeIsUnknown) {
  const store::ReceiptStore receipts(store::layout::Receipts());
  const ReplayRecord record(receipts, store::OperationId::New(*Clock::Real()));
  store::ReceiptResult kept;
  kept.kind = store::ReceiptKind::kBatchWrite;
  kept.extra = "units";
  auto tx = db_->CreateTransaction();
  record.Keep(*tx, 1000, kept);
  ASSERT_TRUE(tx->Commit().ok());
  tx = db_->CreateTransaction();
  Result<std::optional<store::ReceiptResult>> first = record.Find(*tx, {1, false}, 1000);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);
  Result<std::optional<store::ReceiptResult>> again = record.Find(*tx, {2, true}, 1000);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(*again);
  EXPECT_EQ(**again, kept);
}

TEST_F(WriteExecutorTest, ATokenRecordAnswersEveryAttemptAndRefusesAnotherRequest) {
  const store::TokenStore tokens(store::layout::Tokens());
  auto use = [](std::string fingerprint) {
    TokenUse u{
        .key = {"acct", "TransactWriteItems", "tok"},
        .contract = store::kTokenContractTransactWriteItemsV1,
        .fingerprinter = [fingerprint](uint32_t) -> Result<std::string> { return fingerprint; },
        .fingerprint_v1 = fingerprint};
    return u;
  };
  const std::string a(store::kSha256Bytes, 'a'), b(store::kSha256Bytes, 'b');
  store::ReceiptResult kept;
  kept.kind = store::ReceiptKind::kTransactWrite;
  kept.extra = "result";
  auto tx = db_->CreateTransaction();
  ReplayRecord(tokens, use(a)).Keep(*tx, 1000, kept);
  ASSERT_TRUE(tx->Commit().ok());
  tx = db_->CreateTransaction();
  Result<std::optional<store::ReceiptResult>> same =
      ReplayRecord(tokens, use(a)).Find(*tx, {1, false}, 2000);
  ASSERT_TRUE(same.ok()) << same.error().message;
  ASSERT_TRUE(*same);
  EXPECT_EQ((*same)->extra, "result");
  Result<std::optional<store::ReceiptResult>> other =
      ReplayRecord(tokens, use(b)).Find(*tx, {1, false}, 2000);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().type, ErrorType::kIdempotentParameterMismatch);
}

}  // namespace
}  // namespace fdyno::api
