// emcp/mcp/text.h - text made of pieces: strings and numbers formatted without printf (fixed
// point, shortest round-trip, integers), written into a JSON string or a plain buffer.
//
// Context: pure functions; any context.
#ifndef EMCP_MCP_TEXT_H
#define EMCP_MCP_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include <initializer_list>

#include "emcp/json/writer.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace mcp {

/// A piece of text: a string, or a number to format (TextPiece(21.537, 1) -> "21.5").
struct TextPiece {
  /// Formats a number piece into `out` (kMaxChars bytes); returns the length (0: "NaN").
  using Format = size_t (*)(const TextPiece& piece, char* out);
  Format format = nullptr;  ///< nullptr for a string piece
  int8_t decimals = -1;     ///< fixed-point doubles: digits after the point (at most 9)
  StrView s;
  int64_t i = 0;
  double d = 0;
  TextPiece(const char* v) : s(v) {}                            // NOLINT: implicit by design
  TextPiece(StrView v) : s(v) {}                                // NOLINT
  TextPiece(int v) : format(&format_int), i(v) {}               // NOLINT
  TextPiece(long v) : format(&format_int), i(v) {}              // NOLINT
  TextPiece(long long v) : format(&format_int), i(v) {}         // NOLINT
  TextPiece(unsigned v) : format(&format_int), i(v) {}          // NOLINT
  /// The shortest text that reads back as `v` (Number.toString layout).
  TextPiece(double v) : format(&format_shortest), d(v) {}       // NOLINT
  /// `places` digits after the point (0-9; more counts as 9, negative as 0), rounded half away
  /// from zero: 21.537 with 1 gives "21.5". Needs no decimal conversion tables, so firmware
  /// that formats its readings this way stays small. Places are dropped where the scaled
  /// value passes 9e15; from 1.8e19 up the value keeps 12 significant digits ("1.25e+22" from
  /// 1e21 up).
  TextPiece(double v, int8_t places) : format(&format_fixed), decimals(places), d(v) {}
  /// A fixed-point integer: `scaled` / 10^places, e.g. fixed(215, 1) gives "21.5" and
  /// fixed(-5, 2) "-0.05". No floating point at all: the way to report a sensor read in tenths
  /// or milli-units on a core without an FPU (doubles cost ~3 KiB of soft-float on Cortex-M3).
  static TextPiece fixed(int64_t scaled, uint8_t places) {
    TextPiece p(static_cast<long long>(scaled));
    p.format = &format_scaled;
    p.decimals = static_cast<int8_t>(places > 18 ? 18 : places);
    return p;
  }

  /// Longest text of a number piece.
  static constexpr size_t kMaxChars = 40;
  /// The piece as text: a string as it is, a number formatted into `buf`.
  StrView render(char (&buf)[kMaxChars]) const;

  static size_t format_int(const TextPiece& p, char* out);
  static size_t format_shortest(const TextPiece& p, char* out);
  static size_t format_fixed(const TextPiece& p, char* out);
  static size_t format_scaled(const TextPiece& p, char* out);
};

/// Writes `pieces` into an open JSON string (Writer::string_part); numbers are formatted.
void write_text_pieces(json::Writer& w, std::initializer_list<TextPiece> pieces);
/// Writes `pieces` as plain text into `out` (NUL-terminated, cut to `cap` - 1 bytes at a
/// character boundary); returns the length. No printf: for log lines and messages.
size_t format_text(char* out, size_t cap, std::initializer_list<TextPiece> pieces);

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_TEXT_H
