// Small media encoders of the sensors example: a PNG line chart and a WAV beep, to show image
// and audio content. No heap, no libraries: stored (uncompressed) deflate blocks in the PNG.
#ifndef EMCP_EXAMPLES_SENSORS_MEDIA_H
#define EMCP_EXAMPLES_SENSORS_MEDIA_H

#include <stddef.h>
#include <stdint.h>

namespace media {

constexpr int kChartWidth = 64;
constexpr int kChartHeight = 24;
/// Bytes a chart PNG needs at most.
constexpr size_t kMaxPng = 8 + 25 + 12 + 6 + 5 + (kChartWidth + 1) * kChartHeight + 4 + 12 + 12;
/// Bytes the beep WAV needs.
constexpr size_t kMaxWav = 44 + 800;

/// A grayscale line chart of `values[0..n)` (scaled to their range) as a PNG; returns its size
/// (0 if `cap` is too small).
size_t chart_png(const double* values, uint32_t n, uint8_t* out, size_t cap);

/// 0.1 s of an 880 Hz square wave, 8 kHz 8-bit mono, as a WAV file; returns its size.
size_t beep_wav(uint8_t* out, size_t cap);

}  // namespace media

#endif
