#include "kv/engines/fdb/errors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "kv/engines/fdb/loader.h"
#include "kv/kv.h"

namespace fdyno::kv::fdb {
namespace {

// fdb_error_predicate of FoundationDB 7.3 (bindings/c/fdb_c.cpp), code for code: the codes
// FoundationDB retries without a commit, and those whose commit may have been applied.
constexpr int kRetryableNotCommitted[] = {1020, 1007, 1009, 1038, 1078,
                                          1042, 1051, 1037, 1213, 1223};
constexpr int kMaybeCommitted[] = {1021, 1039};
// Codes that must never be retried: limits, misuse, cancellation, timeouts.
constexpr int kFinal[] = {1025, 1031, 1036, 2000, 2004, 2005, 2017, 2018,
                          2021, 2101, 2102, 2103, 1022, 1101, 4000, 4100};

TEST(FdbErrorsTest, ContractCodesPassThrough) {
  for (int code : {1007, 1009, 1020, 1021, 1025, 1031, 1036, 1037, 1039, 2000, 2005, 2017, 2018,
                   2021, 2101, 2102, 2103, 4100}) {
    EXPECT_EQ(KvCode(code), code);
    Error e = FdbError(code, "description");
    EXPECT_TRUE(e.is_kv());
    EXPECT_EQ(e.kv_code, code);
  }
}

TEST(FdbErrorsTest, OperationCancelledIsTransactionCancelled) {
  EXPECT_EQ(KvCode(1101), kTransactionCancelled);
  EXPECT_EQ(FdbError(1101, nullptr).kv_code, kTransactionCancelled);
}

TEST(FdbErrorsTest, MessageCarriesFoundationDbsDescriptionAndCode) {
  EXPECT_EQ(FdbError(1213, "Transaction tag is being throttled").message,
            "Transaction tag is being throttled (fdb error 1213)");
  EXPECT_EQ(FdbError(1020, nullptr).message, "not_committed (fdb error 1020)");
}

TEST(FdbErrorsTest, RetryClassesFollowFoundationDb) {
  for (int code : kRetryableNotCommitted) {
    SCOPED_TRACE(code);
    EXPECT_TRUE(IsRetryable(KvCode(code)));
    EXPECT_TRUE(RetryableNotCommitted(KvCode(code)));
    EXPECT_FALSE(MaybeCommitted(KvCode(code)));
  }
  for (int code : kMaybeCommitted) {
    SCOPED_TRACE(code);
    EXPECT_TRUE(IsRetryable(KvCode(code)));
    EXPECT_TRUE(MaybeCommitted(KvCode(code)));
    EXPECT_FALSE(RetryableNotCommitted(KvCode(code)));
  }
  for (int code : kFinal) {
    SCOPED_TRACE(code);
    EXPECT_FALSE(IsRetryable(KvCode(code)));
    EXPECT_FALSE(MaybeCommitted(KvCode(code)));
  }
}

// Against the installed library's own predicate, for every code it defines.
TEST(FdbErrorsTest, RetryClassesMatchTheLibrarysPredicate) {
  const char* env = std::getenv("FDYNO_FDB_LIBRARY");
  Result<std::unique_ptr<Api>> api = LoadLibrary(env && *env ? env : kDefaultLibrary);
  if (!api.ok()) GTEST_SKIP() << "libfdb_c is not loadable: " << api.error().message;
  int compared = 0;
  for (int code = 1000; code < 5000; ++code) {
    if (std::string((*api)->get_error(code)) == (*api)->get_error(999'999)) continue;  // unknown
    SCOPED_TRACE(std::to_string(code) + " " + (*api)->get_error(code));
    ++compared;
    EXPECT_EQ(IsRetryable(KvCode(code)), (*api)->error_predicate(kPredicateRetryable, code) != 0);
    EXPECT_EQ(MaybeCommitted(KvCode(code)),
              (*api)->error_predicate(kPredicateMaybeCommitted, code) != 0);
    EXPECT_EQ(RetryableNotCommitted(KvCode(code)),
              (*api)->error_predicate(kPredicateRetryableNotCommitted, code) != 0);
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace fdyno::kv::fdb
