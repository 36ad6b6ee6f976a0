// The XML of the S3 REST API: a writer for response bodies, and a reader (expat) for the two
// request bodies S3 takes as XML (CompleteMultipartUpload's parts, DeleteObjects' keys).
//
// Thread-safety: values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fdyno::s3 {

// Writes an XML document: the declaration, then elements. Text is escaped.
class XmlWriter {
 public:
  XmlWriter();
  // <name xmlns="http://s3.amazonaws.com/doc/2006-03-01/"> for the document's root element.
  XmlWriter& OpenRoot(std::string_view name);
  XmlWriter& Open(std::string_view name);
  XmlWriter& Close(std::string_view name);
  // <name>text</name>
  XmlWriter& Element(std::string_view name, std::string_view text);
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Escapes &, <, >, " and ' for XML text.
std::string XmlEscape(std::string_view text);

// A parsed element: its name (without namespace prefix), its text (character data directly in
// it), and its child elements in order.
struct XmlElement {
  std::string name;
  std::string text;
  std::vector<XmlElement> children;

  // The first child named `name`, or null.
  const XmlElement* Child(std::string_view name) const;
};

// The document's root element; nullopt when the text is not well-formed XML (or declares a
// DOCTYPE: no entity expansion is done).
std::optional<XmlElement> ParseXml(std::string_view text);

}  // namespace fdyno::s3
