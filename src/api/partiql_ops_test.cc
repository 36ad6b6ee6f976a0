// PartiQL writes through ExecuteStatement over a real engine (the in-memory one, behind the
// faulty wrapper): each statement is its item operation, so it has that operation's outcomes,
// its index and stream effects and its receipts under injected commit_unknown_result.
#include "api/partiql_ops.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/item_ops.h"
#include "api/testing/call.h"
#include "api/transact_ops.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

class PartiqlWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    faulty_ = kv::WrapFaulty(inner_.get(), kv::FaultOptions{});
    services_.db = faulty_.get();
    services_.catalog = &catalog_;
    ItemOptions items;
    items.sleep = [](std::chrono::milliseconds) {};
    RegisterItemOperations(registry_, services_, items);
    PartiqlOptions options;
    options.write = MakePartiqlWriter(services_, items);
    RegisterPartiqlOperations(registry_, services_, std::move(options));
    TransactOptions transact;
    transact.sleep = [](std::chrono::milliseconds) {};
    RegisterTransactOperations(registry_, services_, transact);
    store::TableInfo t;
    t.region = "us-east-1";
    t.name = "tbl";
    t.attribute_definitions = {{"pk", store::ScalarType::kS}};
    t.key_schema.hash = {"pk", store::ScalarType::kS};
    auto created = kv::Run(*inner_, [&](kv::Transaction& tx, const kv::Attempt&) {
      return catalog_.Create(tx, t, {});
    });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }

  Result<std::string> Call(const std::string& op, const std::string& json) {
    return testing::CallOperation(registry_, op, json);
  }
  Result<std::string> Statement(const std::string& statement, const std::string& extra = "") {
    return Call("ExecuteStatement", R"({"Statement":")" + statement + "\"" + extra + "}");
  }
  std::string Get(const std::string& pk) {
    auto r = Call("GetItem", R"({"TableName":"tbl","Key":{"pk":{"S":")" + pk + R"("}}})");
    return r.ok() ? *r : r.error().message;
  }

  std::unique_ptr<kv::Database> inner_ = kv::OpenMemoryEngine();
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  store::Catalog catalog_;
  Services services_;
  OperationRegistry registry_;
};

TEST_F(PartiqlWriteTest, InsertUpdateDeleteChangeTheItem) {
  auto ins = Statement("INSERT INTO tbl VALUE {'pk': 'a', 'n': 1}");
  ASSERT_TRUE(ins.ok()) << ins.error().message;
  EXPECT_EQ(*ins, R"({"Items":[]})");
  EXPECT_EQ(Get("a"), R"({"Item":{"n":{"N":"1"},"pk":{"S":"a"}}})");
  auto upd = Statement("UPDATE tbl SET n = n + 2 SET s = 'x' WHERE pk = 'a' RETURNING ALL NEW *");
  ASSERT_TRUE(upd.ok()) << upd.error().message;
  EXPECT_EQ(*upd, R"({"Items":[{"n":{"N":"3"},"pk":{"S":"a"},"s":{"S":"x"}}]})");
  auto rem = Statement("UPDATE tbl REMOVE s WHERE pk = 'a' RETURNING MODIFIED OLD *");
  ASSERT_TRUE(rem.ok()) << rem.error().message;
  EXPECT_EQ(*rem, R"({"Items":[{"s":{"S":"x"}}]})");
  auto del = Statement("DELETE FROM tbl WHERE pk = 'a' RETURNING ALL OLD *");
  ASSERT_TRUE(del.ok()) << del.error().message;
  EXPECT_EQ(*del, R"({"Items":[{"n":{"N":"3"},"pk":{"S":"a"}}]})");
  EXPECT_EQ(Get("a"), "{}");
  // Deleting a missing item is no error, as DeleteItem.
  auto again = Statement("DELETE FROM tbl WHERE pk = 'a'");
  ASSERT_TRUE(again.ok()) << again.error().message;
}

TEST_F(PartiqlWriteTest, InsertOfAnExistingKeyIsADuplicate) {
  ASSERT_TRUE(Statement("INSERT INTO tbl VALUE {'pk': 'a', 'n': 1}").ok());
  auto dup = Statement("INSERT INTO tbl VALUE {'pk': 'a', 'n': 2}");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().type, ErrorType::kDuplicateItem);
  EXPECT_EQ(dup.error().message, "Duplicate primary key exists in table");
  EXPECT_EQ(Get("a"), R"({"Item":{"n":{"N":"1"},"pk":{"S":"a"}}})");
}

TEST_F(PartiqlWriteTest, AFalseWhereIsAConditionalCheckFailureWithTheOldItemWhenAsked) {
  ASSERT_TRUE(Statement("INSERT INTO tbl VALUE {'pk': 'a', 'n': 1}").ok());
  auto upd = Statement("UPDATE tbl SET n = 5 WHERE pk = 'a' AND n = 2",
                       R"(,"ReturnValuesOnConditionCheckFailure":"ALL_OLD")");
  ASSERT_FALSE(upd.ok());
  EXPECT_EQ(upd.error().type, ErrorType::kConditionalCheckFailed);
  EXPECT_EQ(upd.error().item_json, R"({"n":{"N":"1"},"pk":{"S":"a"}})");
  auto del = Statement("DELETE FROM tbl WHERE pk = 'a' AND n = 2");
  ASSERT_FALSE(del.ok());
  EXPECT_EQ(del.error().type, ErrorType::kConditionalCheckFailed);
  EXPECT_EQ(del.error().item_json, "");
  // UPDATE of a missing item fails rather than creating it.
  auto missing = Statement("UPDATE tbl SET n = 5 WHERE pk = 'b'");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().type, ErrorType::kConditionalCheckFailed);
  EXPECT_EQ(Get("b"), "{}");
  EXPECT_EQ(Get("a"), R"({"Item":{"n":{"N":"1"},"pk":{"S":"a"}}})");
}

// Commits that report 1021, half of them applied: every accepted UPDATE incremented once
// (the statement's operation receipt replays the applied attempt).
TEST_F(PartiqlWriteTest, UnknownCommitResultsNeverDoubleApplyAnUpdate) {
  ASSERT_TRUE(Statement("INSERT INTO tbl VALUE {'pk': 'n', 'n': 0}").ok());
  kv::FaultOptions faults;
  faults.seed = 20261201;
  faults.unknown_applied = 0.35;
  faults.unknown_not_applied = 0.35;
  faulty_->SetOptions(faults);
  constexpr int kRequests = 500;
  for (int i = 0; i < kRequests; ++i) {
    auto r = Statement("UPDATE tbl SET n = n + 1 WHERE pk = 'n'");
    ASSERT_TRUE(r.ok()) << "request " << i << ": " << r.error().message;
  }
  EXPECT_GT(faulty_->counts().unknown_applied, 100);
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_EQ(Get("n"),
            R"({"Item":{"n":{"N":")" + std::to_string(kRequests) + R"("},"pk":{"S":"n"}}})");
}

// ExecuteTransaction with a ClientRequestToken under commits that report 1021: each token's
// effect applies once, however often its request is sent, and a replay answers as the first.
TEST_F(PartiqlWriteTest, TransactionTokensApplyOnceUnderUnknownCommitResults) {
  ASSERT_TRUE(Statement("INSERT INTO tbl VALUE {'pk': 'n', 'n': 0}").ok());
  kv::FaultOptions faults;
  faults.seed = 20261202;
  faults.unknown_applied = 0.35;
  faults.unknown_not_applied = 0.35;
  faulty_->SetOptions(faults);
  constexpr int kTokens = 100;
  for (int i = 0; i < kTokens; ++i) {
    const std::string n = std::to_string(i);
    const std::string request =
        R"j({"TransactStatements":[{"Statement":"UPDATE tbl SET n = n + 1 WHERE pk = 'n'"},)j"
        R"j({"Statement":"INSERT INTO tbl VALUE {'pk': ?}","Parameters":[{"S":"i)j" +
        n + R"j("}]}],"ClientRequestToken":"token-)j" + n + R"j("})j";
    for (int resend = 0; resend < 3; ++resend) {
      auto r = Call("ExecuteTransaction", request);
      ASSERT_TRUE(r.ok()) << "token " << i << " send " << resend << ": " << r.error().message;
      EXPECT_EQ(*r, R"({"Responses":[]})");  // writes answer an empty list
    }
  }
  EXPECT_GT(faulty_->counts().unknown_applied, 20);
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_EQ(Get("n"),
            R"({"Item":{"n":{"N":")" + std::to_string(kTokens) + R"("},"pk":{"S":"n"}}})");
}

TEST_F(PartiqlWriteTest, TransactionCancellationReasonsAreTransactWriteItems) {
  ASSERT_TRUE(Statement("INSERT INTO tbl VALUE {'pk': 'a', 'n': 1}").ok());
  auto r = Call("ExecuteTransaction",
                R"j({"TransactStatements":[{"Statement":"INSERT INTO tbl VALUE {'pk': 'a'}"},)j"
                R"j({"Statement":"INSERT INTO tbl VALUE {'pk': 'b'}"},)j"
                R"j({"Statement":"EXISTS(SELECT * FROM tbl WHERE pk = 'c' AND n = 1)"}]})j");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kTransactionCanceled) << r.error().message;
  EXPECT_EQ(r.error().cancellation_reasons_json,
            R"([{"Code":"DuplicateItem","Message":"Duplicate primary key exists in table"},)"
            R"({"Code":"None"},)"
            R"({"Code":"ConditionalCheckFailed","Message":"The conditional request failed"}])");
  EXPECT_EQ(Get("b"), "{}");
}

}  // namespace
}  // namespace fdyno::api
