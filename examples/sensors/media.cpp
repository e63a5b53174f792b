#include "media.h"

#include <string.h>

namespace media {

namespace {

void put32be(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
void put32le(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
void put16le(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// CRC-32 (IEEE, as PNG uses), bitwise: no table in flash.
uint32_t crc32(const uint8_t* p, size_t n, uint32_t crc = 0) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t adler32(const uint8_t* p, size_t n) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < n; ++i) {
    a = (a + p[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

// Writes a chunk (length, type, data, CRC) at out; returns its size.
size_t chunk(uint8_t* out, const char* type, const uint8_t* data, uint32_t n) {
  put32be(out, n);
  memcpy(out + 4, type, 4);
  if (n) memmove(out + 8, data, n);
  put32be(out + 8 + n, crc32(out + 4, n + 4));
  return 12 + n;
}

}  // namespace

size_t chart_png(const double* values, uint32_t n, uint8_t* out, size_t cap) {
  if (cap < kMaxPng) return 0;
  static const uint8_t kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  size_t o = 0;
  memcpy(out, kSig, 8);
  o += 8;
  uint8_t ihdr[13];
  put32be(ihdr, kChartWidth);
  put32be(ihdr + 4, kChartHeight);
  ihdr[8] = 8;   // bit depth
  ihdr[9] = 0;   // grayscale
  ihdr[10] = 0;  // deflate
  ihdr[11] = 0;  // adaptive filtering
  ihdr[12] = 0;  // no interlace
  o += chunk(out + o, "IHDR", ihdr, 13);
  // Pixels: one filter byte (0) per row, white background, a dark line.
  uint8_t raw[(kChartWidth + 1) * kChartHeight];
  memset(raw, 0xFF, sizeof raw);
  double lo = 0, hi = 1;
  if (n != 0) {
    lo = hi = values[0];
    for (uint32_t i = 1; i < n; ++i) {
      if (values[i] < lo) lo = values[i];
      if (values[i] > hi) hi = values[i];
    }
    if (hi - lo < 1e-9) hi = lo + 1;
  }
  for (int y = 0; y < kChartHeight; ++y) raw[y * (kChartWidth + 1)] = 0;
  for (int x = 0; x < kChartWidth && n != 0; ++x) {
    const uint32_t i = static_cast<uint32_t>(x) * n / kChartWidth;
    const double f = (values[i] - lo) / (hi - lo);
    int y = kChartHeight - 1 - static_cast<int>(f * (kChartHeight - 1) + 0.5);
    if (y < 0) y = 0;
    raw[y * (kChartWidth + 1) + 1 + x] = 0x20;
  }
  // zlib stream: header, one stored deflate block, Adler-32.
  const uint32_t len = sizeof raw;
  uint8_t* z = out + o + 8;  // where the IDAT data goes (after length and type)
  z[0] = 0x78;
  z[1] = 0x01;
  z[2] = 0x01;  // final block, stored
  put16le(z + 3, static_cast<uint16_t>(len));
  put16le(z + 5, static_cast<uint16_t>(~len));
  memcpy(z + 7, raw, len);
  put32be(z + 7 + len, adler32(raw, len));
  o += chunk(out + o, "IDAT", z, 7 + len + 4);
  o += chunk(out + o, "IEND", nullptr, 0);
  return o;
}

size_t beep_wav(uint8_t* out, size_t cap) {
  const uint32_t samples = 800;  // 0.1 s at 8 kHz
  if (cap < 44 + samples) return 0;
  memcpy(out, "RIFF", 4);
  put32le(out + 4, 36 + samples);
  memcpy(out + 8, "WAVEfmt ", 8);
  put32le(out + 16, 16);     // fmt chunk size
  put16le(out + 20, 1);      // PCM
  put16le(out + 22, 1);      // mono
  put32le(out + 24, 8000);   // sample rate
  put32le(out + 28, 8000);   // byte rate
  put16le(out + 32, 1);      // block align
  put16le(out + 34, 8);      // bits per sample
  memcpy(out + 36, "data", 4);
  put32le(out + 40, samples);
  for (uint32_t i = 0; i < samples; ++i) out[44 + i] = ((i * 880 * 2 / 8000) & 1) ? 0xC0 : 0x40;
  return 44 + samples;
}

}  // namespace media
