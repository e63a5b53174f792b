// emcp/jsonrpc/encode.h - writes JSON-RPC 2.0 messages through a json::Writer.
//
// Responses stream: begin_response() writes the envelope up to `"result":`, the handler writes
// its result value with the same writer, end_message() closes the object. Errors are written
// whole. Nothing is buffered; the sink decides where the bytes go.
//
// Context: the loop that owns the writer.
//
// Example:
//   emcp::jsonrpc::begin_response(w, msg.id);
//   w.begin_object(); w.member_double("celsius", 21.5); w.end_object();
//   emcp::jsonrpc::end_message(w);
//   // {"jsonrpc":"2.0","id":7,"result":{"celsius":21.5}}
#ifndef EMCP_JSONRPC_ENCODE_H
#define EMCP_JSONRPC_ENCODE_H

#include "emcp/json/writer.h"
#include "emcp/jsonrpc/error.h"
#include "emcp/jsonrpc/message.h"

EMCP_NS_BEGIN
namespace jsonrpc {

/// Writes an id: integer, string, or null (kNone is written as null too).
void write_id(json::Writer& w, const Id& id);
/// Writes the member "id": <id>, or nothing for kNone. Responses and errors use it: an error
/// whose request id is unknown carries "id": null per JSON-RPC 2.0 (Id::null()), or no id at all
/// as MCP 2025-11-25 has it (Id{}), as the caller chooses.
void write_id_member(json::Writer& w, const Id& id);

/// {"jsonrpc":"2.0","id":<id>,"result":  - then write the result value and call end_message().
void begin_response(json::Writer& w, const Id& id);
/// {"jsonrpc":"2.0","id":<id>,"method":<method>,"params":  - then the params, then end_message().
void begin_request(json::Writer& w, const Id& id, StrView method);
/// {"jsonrpc":"2.0","method":<method>,"params":  - then the params, then end_message().
void begin_notification(json::Writer& w, StrView method);
/// {"jsonrpc":"2.0","method":<method>}  (a notification without params).
void write_notification(json::Writer& w, StrView method);
/// Closes what a begin_* function opened.
void end_message(json::Writer& w);

/// {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}. An empty message
/// is replaced by the standard one for the code.
void write_error(json::Writer& w, const Id& id, ErrorCode code, StrView message);
/// As write_error(), with `"data":<data>` when `data` (JSON text, written as it is) is not
/// empty.
void write_error_with_raw_data(json::Writer& w, const Id& id, ErrorCode code, StrView message, StrView data);
/// As write_error() but leaves the error object open after `"data":`: write the data value,
/// then call end_error().
void begin_error_with_data(json::Writer& w, const Id& id, ErrorCode code, StrView message);
/// {"jsonrpc":"2.0","id":..,"error":{"code":..,"message":" with the string left open: the
/// caller adds its parts (string_part), then string_end() and two end_object(). With
/// `standard`, the string starts with error_code_message(code).
void begin_error_message(json::Writer& w, const Id& id, ErrorCode code, bool standard);
void end_error(json::Writer& w);

/// The error response for a kInvalid message from the decoder: its code, its id, and a message
/// made of the code's standard message, its reason, the status behind it and the byte offset
/// ("Parse error: unexpected character at byte 17", "Invalid Request: duplicate key").
void write_invalid(json::Writer& w, const Message& m);

}  // namespace jsonrpc
EMCP_NS_END

#endif  // EMCP_JSONRPC_ENCODE_H
