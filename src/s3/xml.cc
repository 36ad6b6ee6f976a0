#include "s3/xml.h"

#include <expat.h>

#include <memory>

namespace fdyno::s3 {

namespace {

constexpr std::string_view kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";

struct ParseState {
  std::vector<XmlElement*> open;  // the path from the root to the element being read
  std::optional<XmlElement> root;
  bool refused = false;
};

std::string LocalName(const XML_Char* name) {
  std::string_view n(name);
  const size_t colon = n.rfind(':');
  return std::string(colon == std::string_view::npos ? n : n.substr(colon + 1));
}

void OnStart(void* data, const XML_Char* name, const XML_Char** /*attributes*/) {
  auto* s = static_cast<ParseState*>(data);
  if (s->open.empty()) {
    s->root.emplace();
    s->root->name = LocalName(name);
    s->open.push_back(&*s->root);
    return;
  }
  XmlElement& child = s->open.back()->children.emplace_back();
  child.name = LocalName(name);
  s->open.push_back(&child);
}

void OnEnd(void* data, const XML_Char* /*name*/) {
  auto* s = static_cast<ParseState*>(data);
  if (!s->open.empty()) s->open.pop_back();
}

void OnText(void* data, const XML_Char* text, int length) {
  auto* s = static_cast<ParseState*>(data);
  if (!s->open.empty()) s->open.back()->text.append(text, static_cast<size_t>(length));
}

void OnDoctype(void* data, const XML_Char* /*name*/, const XML_Char* /*sysid*/,
               const XML_Char* /*pubid*/, int /*has_internal_subset*/) {
  static_cast<ParseState*>(data)->refused = true;
}

}  // namespace

XmlWriter::XmlWriter() : out_("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") {}

XmlWriter& XmlWriter::OpenRoot(std::string_view name) {
  out_.append("<").append(name).append(" xmlns=\"").append(kNamespace).append("\">");
  return *this;
}

XmlWriter& XmlWriter::Open(std::string_view name) {
  out_.append("<").append(name).append(">");
  return *this;
}

XmlWriter& XmlWriter::Close(std::string_view name) {
  out_.append("</").append(name).append(">");
  return *this;
}

XmlWriter& XmlWriter::Element(std::string_view name, std::string_view text) {
  return Open(name), out_.append(XmlEscape(text)), Close(name);
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

const XmlElement* XmlElement::Child(std::string_view child_name) const {
  for (const XmlElement& c : children) {
    if (c.name == child_name) return &c;
  }
  return nullptr;
}

std::optional<XmlElement> ParseXml(std::string_view text) {
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreate("UTF-8"),
                                                                      &XML_ParserFree);
  if (!parser) return std::nullopt;
  ParseState state;
  XML_SetUserData(parser.get(), &state);
  XML_SetElementHandler(parser.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(parser.get(), OnText);
  XML_SetStartDoctypeDeclHandler(parser.get(), OnDoctype);
  if (XML_Parse(parser.get(), text.data(), static_cast<int>(text.size()), /*isFinal=*/1) !=
          XML_STATUS_OK ||
      state.refused || !state.root) {
    return std::nullopt;
  }
  return std::move(state.root);
}

}  // namespace fdyno::s3
