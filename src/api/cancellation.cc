#include "api/cancellation.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "model/json.h"

namespace fdyno::api {

Error TransactionCanceled(const std::vector<CancellationReason>& reasons) {
  std::string codes;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i > 0) codes += ", ";
    codes += reasons[i].code;
    w.StartObject();
    w.Key("Code");
    w.String(reasons[i].code.data(), static_cast<rapidjson::SizeType>(reasons[i].code.size()));
    if (reasons[i].item) {
      w.Key("Item");
      model::WriteItem(w, *reasons[i].item);
    }
    if (!reasons[i].message.empty()) {
      w.Key("Message");
      w.String(reasons[i].message.data(),
               static_cast<rapidjson::SizeType>(reasons[i].message.size()));
    }
    w.EndObject();
  }
  w.EndArray();
  Error e = Error::Make(
      ErrorType::kTransactionCanceled,
      "Transaction cancelled, please refer cancellation reasons for specific reasons [" + codes +
          "]");
  e.cancellation_reasons_json = std::string(buffer.GetString(), buffer.GetSize());
  return e;
}

}  // namespace fdyno::api
