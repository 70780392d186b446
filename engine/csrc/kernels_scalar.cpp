// Portable kernels: the reference for the vector ones and the fallback on CPUs without AVX2.
#include <cmath>
#include <cstring>

#include "cpu_kernels.h"

namespace crescent {

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace {

float weight_value(const QWeight& w, int row, int col) {
  const size_t i = static_cast<size_t>(row) * w.k + col;
  switch (w.format) {
    case F32: return static_cast<const float*>(w.data)[i];
    case F16: return fp16_to_float(static_cast<const uint16_t*>(w.data)[i]);
    case BF16: return bf16_to_float(static_cast<const uint16_t*>(w.data)[i]);
    default: return 0.0f;
  }
}

void linear_float(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) {
  for (int i = 0; i < a.m; ++i) {
    const float* x = a.x + static_cast<size_t>(i) * a.k;
    for (int j = n0; j < n1; ++j) {
      float acc = 0.0f;
      for (int c = 0; c < w.k; ++c) acc += x[c] * weight_value(w, j, c);
      y[static_cast<size_t>(i) * ldy + j] = acc;
    }
  }
}

// Element e of row r in block b of panel p (layouts in cpu_kernels.h).
int q4_code(const QWeight& w, int p, int b, int r, int e) {
  const int nb = w.k / kQ4Block, g = e / 4;
  const uint8_t byte = static_cast<const uint8_t*>(w.data)[((static_cast<size_t>(p) * nb + b) * 4 + g % 4) * 32 + r * 4 + e % 4];
  return g < 4 ? (byte & 0x0f) : (byte >> 4);
}

int q8_code(const QWeight& w, int p, int b, int r, int e) {
  const int nb = w.k / kActBlock;
  return static_cast<const int8_t*>(w.data)[((static_cast<size_t>(p) * nb + b) * 8 + e / 4) * 32 + r * 4 + e % 4];
}

float q8_scale(const QWeight& w, int p, int b, int half, int r) {
  const int nb = w.k / kActBlock;
  return fp16_to_float(w.d[((static_cast<size_t>(p) * nb + b) * 2 + half) * kPanel + r]);
}

void linear_q4(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) {
  const int nb = w.k / kQ4Block;
  for (int i = 0; i < a.m; ++i) {
    const int8_t* xq = a.q + static_cast<size_t>(i) * a.k;
    const float* dx = a.dq + static_cast<size_t>(i) * nb;
    const float* sx = a.sq + static_cast<size_t>(i) * nb;
    for (int j = n0; j < n1; ++j) {
      const int p = j / kPanel, r = j % kPanel;
      float acc = 0.0f;
      for (int b = 0; b < nb; ++b) {
        int isum = 0;
        for (int e = 0; e < kQ4Block; ++e) isum += q4_code(w, p, b, r, e) * xq[b * kQ4Block + e];
        const size_t s = (static_cast<size_t>(p) * nb + b) * kPanel + r;
        acc += fp16_to_float(w.d[s]) * dx[b] * static_cast<float>(isum) + fp16_to_float(w.m[s]) * sx[b];
      }
      y[static_cast<size_t>(i) * ldy + j] = acc;
    }
  }
}

void linear_q8(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) {
  const int nb = w.k / kActBlock;
  for (int i = 0; i < a.m; ++i) {
    const int8_t* xq = a.q + static_cast<size_t>(i) * a.k;
    const float* dx = a.dq + static_cast<size_t>(i) * nb;
    for (int j = n0; j < n1; ++j) {
      const int p = j / kPanel, r = j % kPanel;
      float acc = 0.0f;
      for (int b = 0; b < nb; ++b) {
        for (int half = 0; half < 2; ++half) {
          int isum = 0;
          for (int e = 16 * half; e < 16 * half + 16; ++e) isum += q8_code(w, p, b, r, e) * xq[b * kActBlock + e];
          acc += q8_scale(w, p, b, half, r) * dx[b] * static_cast<float>(isum);
        }
      }
      y[static_cast<size_t>(i) * ldy + j] = acc;
    }
  }
}

void linear(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) {
  switch (w.format) {
    case Q4: return linear_q4(w, a, y, ldy, n0, n1);
    case Q8: return linear_q8(w, a, y, ldy, n0, n1);
    default: return linear_float(w, a, y, ldy, n0, n1);
  }
}

void quantize_row(const float* x, int k, int8_t* q, float* dq, float* sq) {
  for (int b = 0; b < k / kActBlock; ++b) {
    const float* xb = x + b * kActBlock;
    float amax = 0.0f;
    for (int t = 0; t < kActBlock; ++t) amax = std::fmax(amax, std::fabs(xb[t]));
    const float d = amax / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int t = 0; t < kActBlock; ++t) {
      const int v = static_cast<int>(std::nearbyint(xb[t] * inv));
      q[b * kActBlock + t] = static_cast<int8_t>(v);
      sum += v;
    }
    dq[b] = d;
    sq[b] = d * static_cast<float>(sum);
  }
}

void rmsnorm(const float* x, const float* w, float eps, int k, float* out) {
  float ss = 0.0f;
  for (int j = 0; j < k; ++j) ss += x[j] * x[j];
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(k) + eps);
  for (int j = 0; j < k; ++j) out[j] = w[j] * (x[j] * r);
}

void silu_mul(const float* gate, const float* up, int k, float* out) {
  for (int j = 0; j < k; ++j) out[j] = gate[j] / (1.0f + std::exp(-gate[j])) * up[j];
}

float dot(const float* a, const float* b, int k) {
  float s = 0.0f;
  for (int j = 0; j < k; ++j) s += a[j] * b[j];
  return s;
}

void axpy(float alpha, const float* x, int k, float* y) {
  for (int j = 0; j < k; ++j) y[j] += alpha * x[j];
}

float exp_shift_sum(float* x, int k, float max) {
  float s = 0.0f;
  for (int j = 0; j < k; ++j) { x[j] = std::exp(x[j] - max); s += x[j]; }
  return s;
}

void dequantize_row(const QWeight& w, int row, float* out) {
  const int p = row / kPanel, r = row % kPanel;
  if (w.format == Q4) {
    const int nb = w.k / kQ4Block;
    for (int b = 0; b < nb; ++b) {
      const size_t s = (static_cast<size_t>(p) * nb + b) * kPanel + r;
      const float d = fp16_to_float(w.d[s]), m = fp16_to_float(w.m[s]);
      for (int e = 0; e < kQ4Block; ++e) out[b * kQ4Block + e] = d * static_cast<float>(q4_code(w, p, b, r, e)) + m;
    }
  } else if (w.format == Q8) {
    for (int b = 0; b < w.k / kActBlock; ++b)
      for (int e = 0; e < kActBlock; ++e)
        out[b * kActBlock + e] = q8_scale(w, p, b, e / 16, r) * static_cast<float>(q8_code(w, p, b, r, e));
  } else {
    for (int c = 0; c < w.k; ++c) out[c] = weight_value(w, row, c);
  }
}

void attend(const AttendTile& a) { attend_rows(a, dot, axpy, exp_shift_sum); }

const Kernels kScalar = {"scalar", linear, quantize_row, rmsnorm, silu_mul, dot, axpy,
                         exp_shift_sum, dequantize_row, attend};

}  // namespace

const Kernels* kernels_scalar() { return &kScalar; }

}  // namespace crescent
