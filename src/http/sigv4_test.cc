#include "http/sigv4.h"

#include <gtest/gtest.h>

#include <thread>

namespace fdyno::http {
namespace {

// AWS's published SigV4 test suite (aws-sig-v4-test-suite): credentials, scope and time.
constexpr char kKeyId[] = "AKIDEXAMPLE";
constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr int64_t kNowMs = 1440938160000;  // 20150830T123600Z

CredentialStore ExampleStore() {
  CredentialStore store;
  store.Add({kKeyId, kSecret, "123456789012"});
  return store;
}

VerifyOptions SuiteOptions() {
  VerifyOptions o;
  o.region = "us-east-1";
  o.service = "service";
  o.now_ms = kNowMs;
  return o;
}

struct Vector {
  const char* name;
  const char* method;
  const char* target;
  std::vector<std::pair<std::string_view, std::string_view>> headers;  // besides host, date
  const char* signed_headers;
  const char* body;
  const char* signature;
};

class SuiteTest : public ::testing::TestWithParam<Vector> {};

TEST_P(SuiteTest, PublishedSignatureVerifies) {
  const Vector& v = GetParam();
  std::string auth = std::string(
                         "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
                         "service/aws4_request, SignedHeaders=") +
                     v.signed_headers + ", Signature=" + v.signature;
  SignedRequest r;
  r.method = v.method;
  r.target = v.target;
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  for (auto& h : v.headers) r.headers.push_back(h);
  r.headers.emplace_back("Authorization", auth);
  r.body = v.body;
  auto identity = Verify(r, ExampleStore(), SuiteOptions());
  ASSERT_TRUE(identity.ok()) << v.name << ": " << identity.error().message;
  EXPECT_EQ(identity->account_id, "123456789012");

  // One changed signature hex digit must be rejected.
  std::string bad = auth;
  bad.back() = bad.back() == '0' ? '1' : '0';
  r.headers.back().second = bad;
  auto rejected = Verify(r, ExampleStore(), SuiteOptions());
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().type, ErrorType::kInvalidSignature);
}

INSTANTIATE_TEST_SUITE_P(
    AwsSigV4TestSuite, SuiteTest,
    ::testing::Values(Vector{"get-vanilla",
                             "GET",
                             "/",
                             {},
                             "host;x-amz-date",
                             "",
                             "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
                      Vector{"get-vanilla-query-order-key-case",
                             "GET",
                             "/?Param2=value2&Param1=value1",
                             {},
                             "host;x-amz-date",
                             "",
                             "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
                      Vector{"post-vanilla",
                             "POST",
                             "/",
                             {},
                             "host;x-amz-date",
                             "",
                             "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
                      Vector{"post-x-www-form-urlencoded",
                             "POST",
                             "/",
                             {{"Content-Type", "application/x-www-form-urlencoded"}},
                             "content-type;host;x-amz-date",
                             "Param1=value1",
                             "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
                      Vector{"get-header-value-trim",
                             "GET",
                             "/",
                             {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}},
                             "host;my-header1;my-header2;x-amz-date",
                             "",
                             "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
                      Vector{"post-header-key-sort",
                             "POST",
                             "/",
                             {{"My-Header1", "value1"}},
                             "host;my-header1;x-amz-date",
                             "",
                             "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
                      Vector{"post-header-value-case",
                             "POST",
                             "/",
                             {{"My-Header1", "VALUE1"}},
                             "host;my-header1;x-amz-date",
                             "",
                             "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
                      Vector{"get-utf8",
                             "GET",
                             "/\xe1\x88\xb4",
                             {},
                             "host;x-amz-date",
                             "",
                             "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& c : n) {
        if (c == '-') c = '_';
      }
      return n;
    });

TEST(SigV4Test, SigningKeyMatchesAwsDocumentation) {
  // The derived key of AWS's "Examples of how to derive a signing key" page.
  EXPECT_EQ(HexEncode(SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215",
                                 "us-east-1", "iam")),
            "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

TEST(SigV4Test, DigestsMatchKnownAnswersOnEveryCallAndThread) {
  // FIPS 180-2 and RFC 4231 (test case 2) vectors. The contexts are reused per thread, so each
  // is checked again after other inputs and on a second thread.
  auto check = [] {
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
      EXPECT_EQ(Sha256Hex("abc"),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
      EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
      EXPECT_EQ(HexEncode(HmacSha256(std::string(131, '\xaa'),
                                     "Test Using Larger Than Block-Size Key - Hash Key First")),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }
  };
  check();
  std::thread other(check);
  other.join();
}

// A request signed by SignHeaders for DynamoDB, for the error-path tests.
struct Signed {
  std::string body = "{}";
  std::vector<std::pair<std::string, std::string>> owned;
  SignedRequest request;
};

Signed MakeSigned(int64_t now_ms, const std::string& secret = kSecret,
                  const std::string& region = "us-east-1") {
  Signed s;
  s.owned = {{"Host", "localhost:8000"},
             {"Content-Type", "application/x-amz-json-1.0"},
             {"X-Amz-Target", "DynamoDB_20120810.DescribeEndpoints"}};
  SignedRequest base;
  base.method = "POST";
  base.target = "/";
  for (auto& [k, v] : s.owned) base.headers.emplace_back(k, v);
  base.body = s.body;
  SigningParams params{kKeyId, secret, region, "dynamodb", now_ms};
  for (auto& h : SignHeaders(base, params)) s.owned.push_back(h);
  s.request = base;
  s.request.headers.clear();
  for (auto& [k, v] : s.owned) s.request.headers.emplace_back(k, v);
  return s;
}

VerifyOptions DynamoOptions(int64_t now_ms) {
  VerifyOptions o;
  o.now_ms = now_ms;
  return o;
}

TEST(SigV4Test, SignedRequestVerifies) {
  Signed s = MakeSigned(kNowMs);
  auto identity = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs + 60'000));
  ASSERT_TRUE(identity.ok()) << identity.error().message;
  EXPECT_EQ(identity->access_key_id, kKeyId);
}

TEST(SigV4Test, AuthorizationParametersSeparatedBySpacesAloneAreRead) {
  Signed s = MakeSigned(kNowMs);
  for (auto& [name, value] : s.owned) {
    if (name != "Authorization") continue;
    for (size_t at = value.find(", "); at != std::string::npos; at = value.find(", ")) {
      value.erase(at, 1);  // "A=1, B=2" -> "A=1 B=2"
    }
    EXPECT_EQ(value.find(','), std::string::npos) << value;
  }
  s.request.headers.clear();
  for (auto& [k, v] : s.owned) s.request.headers.emplace_back(k, v);
  auto identity = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs + 60'000));
  ASSERT_TRUE(identity.ok()) << identity.error().message;
  EXPECT_EQ(identity->access_key_id, kKeyId);
}

TEST(SigV4Test, MissingAuthorization) {
  SignedRequest r;
  r.method = "POST";
  r.target = "/";
  r.headers = {{"Host", "x"}};
  auto result = Verify(r, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kMissingAuthenticationToken);
  EXPECT_EQ(result.error().message, "Request is missing Authentication Token");
}

TEST(SigV4Test, WrongSecretIsInvalidSignature) {
  Signed s = MakeSigned(kNowMs, "not-the-secret");
  auto result = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kInvalidSignature);
  EXPECT_EQ(result.error().message.rfind(
                "The request signature we calculated does not match the signature you provided. "
                "Check your AWS Secret Access Key and signing method. Consult the service "
                "documentation for details.",
                0),
            0u);
}

TEST(SigV4Test, UnknownKeyIsUnrecognizedClient) {
  Signed s = MakeSigned(kNowMs);
  CredentialStore other;
  other.Add({"AKIDOTHER", "x", "111111111111"});
  auto result = Verify(s.request, other, DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kUnrecognizedClient);
  EXPECT_EQ(result.error().message, "The security token included in the request is invalid.");
}

// One endpoint serves every region: a signature for any of AWS's regions is accepted and names
// the request's region; a region that is neither AWS's nor the server's own is refused.
TEST(SigV4Test, EveryAwsRegionIsOneOfTheServersAndOthersAreRefused) {
  Signed eu = MakeSigned(kNowMs, kSecret, "eu-west-1");
  auto accepted = Verify(eu.request, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_TRUE(accepted.ok()) << accepted.error().message;
  EXPECT_EQ(accepted->region, "eu-west-1");
  Signed made_up = MakeSigned(kNowMs, kSecret, "moon-east-1");
  auto result = Verify(made_up.request, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kInvalidSignature);
  EXPECT_EQ(result.error().message,
            "Credential should be scoped to a valid region, not 'moon-east-1'.");
  VerifyOptions own = DynamoOptions(kNowMs);
  own.region = "moon-east-1";  // the server's --region may be a name of the user's
  EXPECT_TRUE(Verify(made_up.request, ExampleStore(), own).ok());
}

TEST(SigV4Test, StaleAndFutureDates) {
  Signed s = MakeSigned(kNowMs);
  auto stale = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs + 16 * 60'000));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().type, ErrorType::kInvalidSignature);
  EXPECT_EQ(stale.error().message,
            "Signature expired: 20150830T123600Z is now earlier than 20150830T123700Z "
            "(20150830T125200Z - 15 min.)");
  auto future = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs - 16 * 60'000));
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.error().type, ErrorType::kInvalidSignature);
  EXPECT_NE(future.error().message.find("Signature not yet current"), std::string::npos);
  EXPECT_TRUE(Verify(s.request, ExampleStore(), DynamoOptions(kNowMs + 14 * 60'000)).ok());
}

TEST(SigV4Test, TamperedBodyRejected) {
  Signed s = MakeSigned(kNowMs);
  std::string tampered = "{\"Limit\":1}";
  s.request.body = tampered;
  auto result = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kInvalidSignature);
}

TEST(SigV4Test, ContentSha256HeaderMustMatchBody) {
  Signed s = MakeSigned(kNowMs);
  std::string wrong = Sha256Hex("something else");
  s.request.headers.emplace_back("X-Amz-Content-Sha256", wrong);
  auto result = Verify(s.request, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kInvalidSignature);
}

TEST(SigV4Test, IncompleteAuthorization) {
  SignedRequest r;
  r.method = "POST";
  r.target = "/";
  r.headers = {{"Host", "x"}, {"Authorization", "AWS4-HMAC-SHA256 Credential=a/b/c/d/e"}};
  auto result = Verify(r, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, ErrorType::kIncompleteSignature);
  EXPECT_EQ(result.error().message,
            "Authorization header requires 'Signature' parameter. Authorization header requires "
            "'SignedHeaders' parameter. Authorization header requires existence of either a "
            "'X-Amz-Date' or a 'Date' header. Authorization=AWS4-HMAC-SHA256 "
            "Credential=a/b/c/d/e");
}

// A request date outside the allowed skew is reported before anything else of the header, as
// DynamoDB does; an Authorization header whose parameters are separated by spaces alone is read.
TEST(SigV4Test, ExpiryIsReportedFirstAndSpaceSeparatedParametersAreRead) {
  SignedRequest r;
  r.method = "POST";
  r.target = "/";
  const std::string auth =
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/dynamodb/aws4_request "
      "SignedHeaders=host;x-amz-date Signature=abc";
  r.headers = {{"Host", "x"}, {"X-Amz-Date", "20150830T123600Z"}, {"Authorization", auth}};
  auto stale = Verify(r, ExampleStore(), DynamoOptions(kNowMs + 16 * 60'000));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().type, ErrorType::kInvalidSignature);
  EXPECT_EQ(stale.error().message.rfind("Signature expired: ", 0), 0u) << stale.error().message;
  auto future = Verify(r, ExampleStore(), DynamoOptions(kNowMs - 16 * 60'000));
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.error().message.rfind("Signature not yet current: ", 0), 0u);
  // In time, the header is read: its signature is the wrong one.
  auto current = Verify(r, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(current.ok());
  EXPECT_EQ(current.error().type, ErrorType::kInvalidSignature) << current.error().message;
  // A header that is incomplete stays so, and is still checked for expiry first.
  r.headers[2].second =
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/dynamodb/aws4_request";
  EXPECT_EQ(Verify(r, ExampleStore(), DynamoOptions(kNowMs)).error().type,
            ErrorType::kIncompleteSignature);
  EXPECT_EQ(Verify(r, ExampleStore(), DynamoOptions(kNowMs + 16 * 60'000)).error().type,
            ErrorType::kInvalidSignature);
}

TEST(SigV4Test, OpenModeAcceptsAnyWellFormedSignature) {
  Signed s = MakeSigned(kNowMs, "whatever", "eu-west-1");
  CredentialStore open;
  auto result = Verify(s.request, open, DynamoOptions(kNowMs + 3'600'000));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->account_id, kOpenModeAccount);
  SignedRequest r;
  r.method = "POST";
  r.target = "/";
  r.headers = {{"Host", "x"}};
  EXPECT_FALSE(Verify(r, open, DynamoOptions(kNowMs)).ok());
}

TEST(SigV4Test, PresignedQueryForm) {
  // Build the presigned form by hand, as botocore's SigV4QueryAuth does.
  std::string scope = "20150830/us-east-1/dynamodb/aws4_request";
  std::string query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" +
                      UriEncode(std::string(kKeyId) + "/" + scope, false) +
                      "&X-Amz-Date=20150830T123600Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host";
  std::string target = "/?" + query;
  SignedRequest r;
  r.method = "POST";
  r.target = target;
  r.headers = {{"Host", "localhost:8000"}};
  r.body = "{}";
  std::string canonical = CanonicalRequest(r, {"host"}, Sha256Hex("{}"));
  std::string signature =
      HexEncode(HmacSha256(SigningKey(kSecret, "20150830", "us-east-1", "dynamodb"),
                           StringToSign("20150830T123600Z", scope, canonical)));
  std::string signed_target = target + "&X-Amz-Signature=" + signature;
  r.target = signed_target;
  auto ok = Verify(r, ExampleStore(), DynamoOptions(kNowMs + 60'000));
  ASSERT_TRUE(ok.ok()) << ok.error().message;

  // The body is covered by the presigned signature too.
  r.body = "{\"x\":1}";
  auto tampered = Verify(r, ExampleStore(), DynamoOptions(kNowMs + 60'000));
  ASSERT_FALSE(tampered.ok());
  EXPECT_EQ(tampered.error().type, ErrorType::kInvalidSignature);
  r.body = "{}";

  auto expired = Verify(r, ExampleStore(), DynamoOptions(kNowMs + 301'000));
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().type, ErrorType::kInvalidSignature);

  std::string bad_target = signed_target;
  bad_target.back() = bad_target.back() == '0' ? '1' : '0';
  r.target = bad_target;
  auto bad = Verify(r, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().type, ErrorType::kInvalidSignature);

  // Both forms at once.
  r.target = signed_target;
  r.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=x");
  auto both = Verify(r, ExampleStore(), DynamoOptions(kNowMs));
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().type, ErrorType::kInvalidSignature);
}

TEST(CredentialStoreTest, ParsesLinesAndComments) {
  auto store = CredentialStore::Parse(
      "# keys\nAKID1 secret1 123456789012\n\n  AKID2\tsecret2 210987654321  # second\n", "f");
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store->size(), 2u);
  ASSERT_NE(store->Find("AKID2"), nullptr);
  EXPECT_EQ(store->Find("AKID2")->secret_access_key, "secret2");
  EXPECT_EQ(store->Find("AKID2")->account_id, "210987654321");
  EXPECT_EQ(store->Find("AKID3"), nullptr);

  auto bad = CredentialStore::Parse("AKID1 secret1\n", "creds.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("creds.txt:1"), std::string::npos);
  EXPECT_FALSE(CredentialStore::Parse("AKID1 s 12345\n", "f").ok());
  EXPECT_FALSE(CredentialStore::Parse("A s 123456789012\nA t 123456789012\n", "f").ok());
}

TEST(SigV4Test, UriEncoding) {
  EXPECT_EQ(UriEncode("a b/c~d", true), "a%20b/c~d");
  EXPECT_EQ(UriEncode("a b/c", false), "a%20b%2Fc");
  EXPECT_EQ(UriDecode("a%20b%2fc%"), "a b/c%");
  EXPECT_EQ(AmzDate(kNowMs), "20150830T123600Z");
  EXPECT_EQ(ParseAmzDate("20150830T123600Z"), kNowMs / 1000);
  EXPECT_FALSE(ParseAmzDate("2015-08-30T12:36:00Z").has_value());
}

}  // namespace
}  // namespace fdyno::http

namespace fdyno::http {
namespace {

// The derivation names the owner of stored tables: these values must never change.
TEST(LocalAccountTest, IsAStableTwelveDigitDerivationOfKeyAndRegion) {
  EXPECT_EQ(LocalAccount("alice", "us-east-1"), "973815832437");
  EXPECT_EQ(LocalAccount("AKIDEXAMPLE", "eu-west-1"), "131982425496");
  EXPECT_NE(LocalAccount("alice", "us-east-1"), LocalAccount("alice", "us-west-2"));
  EXPECT_NE(LocalAccount("alice", "us-east-1"), LocalAccount("bob", "us-east-1"));
}

}  // namespace
}  // namespace fdyno::http
