#include "s3/xml.h"

#include <gtest/gtest.h>

namespace fdyno::s3 {
namespace {

TEST(XmlTest, WritesEscapedElementsUnderTheS3Namespace) {
  XmlWriter w;
  w.OpenRoot("R").Element("Key", "a<b>&\"c'").Close("R");
  EXPECT_EQ(w.Take(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<R xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Key>a&lt;b&gt;&amp;&quot;c&apos;</Key></R>");
}

TEST(XmlTest, ReadsElementsTextAndChildrenWithoutNamespacePrefixes) {
  std::optional<XmlElement> doc = ParseXml(
      "<?xml version=\"1.0\"?><s3:Delete xmlns:s3=\"x\"><Quiet>true</Quiet>"
      "<Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object></s3:Delete>");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->name, "Delete");
  ASSERT_EQ(doc->children.size(), 3u);
  EXPECT_EQ(doc->Child("Quiet")->text, "true");
  EXPECT_EQ(doc->children[1].Child("Key")->text, "a&b");
  EXPECT_EQ(doc->children[2].Child("Key")->text, "c");
  EXPECT_EQ(doc->Child("Nothing"), nullptr);
}

TEST(XmlTest, RefusesMalformedDocumentsAndDoctypes) {
  EXPECT_FALSE(ParseXml("<a><b></a>"));
  EXPECT_FALSE(ParseXml(""));
  EXPECT_FALSE(ParseXml("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>"));
}

}  // namespace
}  // namespace fdyno::s3
