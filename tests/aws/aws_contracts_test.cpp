// AwsContracts: requests as mvr's clients put them on the wire, held to botocore's models of
// DynamoDB, SQS, SSM and S3 (read from the installed awscli); for each service one request that
// fits and one that does not, with the breach named by operation and field.
#include "aws/contracts/aws_contracts.h"

#include <gtest/gtest.h>

#include <string>

#include "aws/contracts/xml_payload.h"

namespace mvr::aws {
namespace {

const AwsContracts& Contracts() {
  static const AwsContracts contracts{std::string(kAwscliBotocoreData)};
  return contracts;
}

WireRequest Json(const std::string& target, const std::string& version, const std::string& body) {
  WireRequest r;
  r.method = "POST";
  r.raw_path = "/";
  r.headers.Set("X-Amz-Target", target);
  r.headers.Set("Content-Type", "application/x-amz-json-" + version);
  r.body = body;
  return r;
}

WireRequest S3(const std::string& method, const std::string& path, const std::string& query,
               const std::string& body = "") {
  WireRequest r;
  r.method = method;
  r.raw_path = path;
  r.query = query;
  r.headers.Set("Authorization",
                "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3/aws4_request, "
                "SignedHeaders=host, Signature=00");
  r.body = body;
  return r;
}

void ExpectFits(const WireRequest& request, const std::string& operation) {
  ContractVerdict v = Contracts().Check(request);
  EXPECT_TRUE(v.checked);
  EXPECT_EQ(v.operation, operation);
  EXPECT_TRUE(v.status.ok()) << v.status.ToString();
}

void ExpectBreach(const WireRequest& request, const std::string& message) {
  ContractVerdict v = Contracts().Check(request);
  EXPECT_TRUE(v.checked);
  EXPECT_EQ(v.status.code(), Code::kInvalidArgument);
  EXPECT_EQ(v.status.message(), message);
}

TEST(AwsContractsTest, EveryModelLoadsWithTheProtocolMvrSpeaks) {
  ASSERT_TRUE(Contracts().ModelsPresent().ok());
  Status loaded = Contracts().LoadAll();
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
}

TEST(AwsContractsTest, MissingModelDirectoryIsNamed) {
  AwsContracts none("/nonexistent/botocore/data");
  EXPECT_EQ(none.ModelsPresent().code(), Code::kNotFound);
  Status loaded = none.LoadAll();
  EXPECT_EQ(loaded.code(), Code::kNotFound);
  EXPECT_NE(loaded.message().find("/nonexistent/botocore/data/dynamodb/2012-08-10"),
            std::string::npos);
}

TEST(AwsContractsTest, DynamoDbPutItem) {
  ExpectFits(Json("DynamoDB_20120810.PutItem", "1.0",
                  R"({"TableName":"mvr-state","Item":{"PK":{"S":"a"},"n":{"N":"1"}}})"),
             "PutItem");
  ExpectBreach(Json("DynamoDB_20120810.PutItem", "1.0", R"({"Item":{"PK":{"S":"a"}}})"),
               "dynamodb PutItem: TableName: required member is missing");
  ExpectBreach(Json("DynamoDB_20120810.PutItem", "1.0", R"({"TableName":"ab","Item":{}})"),
               "dynamodb PutItem: TableName: length 2 is below the minimum of 3");
}

TEST(AwsContractsTest, JsonProtocolEnvelopeIsChecked) {
  ExpectBreach(Json("DynamoDB_20120810.PutItem", "1.1", R"({"TableName":"abc","Item":{}})"),
               "dynamodb PutItem: Content-Type is \"application/x-amz-json-1.1\", not "
               "application/x-amz-json-1.0");
  ExpectBreach(Json("DynamoDB_20120810.PutThing", "1.0", "{}"),
               "dynamodb PutThing: the model has no such operation");
  ExpectBreach(Json("AmazonSSM.GetParameter", "1.1", "[]"),
               "ssm GetParameter: the body is not a JSON object");
}

TEST(AwsContractsTest, SqsSendMessageInItsJsonForm) {
  ExpectFits(Json("AmazonSQS.SendMessage", "1.0",
                  R"({"QueueUrl":"http://q","MessageBody":"x","DelaySeconds":5,)"
                  R"("MessageAttributes":{"k":{"DataType":"String","StringValue":"v"}}})"),
             "SendMessage");
  // The JSON form carries numbers as numbers; the query protocol's "5" is not one.
  ExpectBreach(Json("AmazonSQS.SendMessage", "1.0",
                    R"({"QueueUrl":"http://q","MessageBody":"x","DelaySeconds":"5"})"),
               "sqs SendMessage: DelaySeconds: expected an integer, got string");
  ExpectBreach(Json("AmazonSQS.SendMessage", "1.0",
                    R"({"QueueUrl":"http://q","MessageBody":"x",)"
                    R"("MessageAttributes":{"k":{"StringValue":"v"}}})"),
               "sqs SendMessage: MessageAttributes[\"k\"].DataType: required member is missing");
}

TEST(AwsContractsTest, SsmGetParameter) {
  ExpectFits(Json("AmazonSSM.GetParameter", "1.1", R"({"Name":"/mvr/key","WithDecryption":true})"),
             "GetParameter");
  ExpectBreach(
      Json("AmazonSSM.GetParameter", "1.1", R"({"Name":")" + std::string(2049, 'a') + R"("})"),
      "ssm GetParameter: Name: length 2049 exceeds the maximum of 2048");
}

TEST(AwsContractsTest, S3RoutesByMethodPathAndQuery) {
  ExpectFits(S3("PUT", "/bucket/a/b.tar", ""), "PutObject");
  ExpectFits(S3("PUT", "/bucket/a/b.tar", "partNumber=1&uploadId=u1", "bytes"), "UploadPart");
  ExpectFits(S3("POST", "/bucket/a/b.tar", "uploads="), "CreateMultipartUpload");
  ExpectFits(S3("DELETE", "/bucket/a/b.tar", "uploadId=u1"), "AbortMultipartUpload");
  ExpectFits(S3("HEAD", "/bucket/a%2Fb.tar", ""), "HeadObject");
  ExpectFits(S3("GET", "/bucket", "list-type=2&prefix=a"), "ListObjectsV2");
  ExpectFits(S3("GET", "/bucket", "uploads"), "ListMultipartUploads");
}

TEST(AwsContractsTest, S3UploadPartNeedsItsQueryMembers) {
  ExpectBreach(S3("PUT", "/bucket/k", "partNumber=1", "bytes"),
               "s3 UploadPart: UploadId: required member is missing");
  ExpectBreach(S3("PUT", "/bucket/k", "partNumber=one&uploadId=u", "bytes"),
               "s3 UploadPart: PartNumber: \"one\" is not an integer");
  ExpectBreach(S3("PATCH", "/bucket/k", ""),
               "s3 (no operation): no operation of the model is "
               "PATCH /bucket/k");
}

TEST(AwsContractsTest, S3CompleteMultipartUploadXmlPayload) {
  const std::string ok =
      R"(<?xml version="1.0" encoding="UTF-8"?>)"
      R"(<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part>)"
      R"(<Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>)"
      R"(</CompleteMultipartUpload>)";
  ExpectFits(S3("POST", "/bucket/k", "uploadId=u1", ok), "CompleteMultipartUpload");
  ExpectBreach(S3("POST", "/bucket/k", "uploadId=u1",
                  "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber></Part>"
                  "</CompleteMultipartUpload>"),
               "s3 CompleteMultipartUpload: MultipartUpload.Parts[0].PartNumber: expected an "
               "integer, got string");
  ExpectBreach(S3("POST", "/bucket/k", "uploadId=u1", "<Complete><Part/></Complete>"),
               "s3 CompleteMultipartUpload: MultipartUpload: the XML root element is <Complete>, "
               "the model's is <CompleteMultipartUpload>");
  ExpectBreach(S3("POST", "/bucket/k", "uploadId=u1", "<CompleteMultipartUpload><Part>"),
               "s3 CompleteMultipartUpload: XML payload: unterminated element <Part> at offset 31");
}

TEST(AwsContractsTest, ServicesWithoutAModelPassUnchecked) {
  WireRequest iam;
  iam.method = "POST";
  iam.raw_path = "/";
  iam.headers.Set("Authorization",
                  "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/iam/aws4_request, "
                  "SignedHeaders=host, Signature=00");
  iam.body = "Action=CreateUser&UserName=x";
  ContractVerdict v = Contracts().Check(iam);
  EXPECT_FALSE(v.checked);
  EXPECT_EQ(v.service, "iam");
  EXPECT_TRUE(v.status.ok());
}

TEST(AwsContractsTest, SignedForDynamoDbWithoutATargetIsABreach) {
  WireRequest r = Json("", "1.0", "{}");
  r.headers.Remove("X-Amz-Target");
  r.headers.Set("Authorization",
                "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
                "SignedHeaders=host, Signature=00");
  ExpectBreach(r,
               "dynamodb (no operation): a JSON-protocol request without X-Amz-Target "
               "DynamoDB_20120810.<Operation>");
}

TEST(XmlPayloadTest, EntitiesAndNamespacesAreRead) {
  auto root = ParseXml("<a:Root xmlns:a=\"n\"><B>x &amp; &#65;&#x42;</B><C/></a:Root>");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->name, "Root");
  ASSERT_EQ(root->children.size(), 2u);
  EXPECT_EQ(root->children[0].text, "x & AB");
  EXPECT_FALSE(ParseXml("<a><b></a></b>").ok());
  EXPECT_FALSE(ParseXml("<a>&bogus;</a>").ok());
  EXPECT_FALSE(ParseXml("<a/>trailing").ok());
}

}  // namespace
}  // namespace mvr::aws
