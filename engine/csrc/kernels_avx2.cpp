// AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c; chosen at run time).
//
// The integer dot products follow ggml's x86 path (llama.cpp, ggml-cpu/arch/x86/quants.c):
// _mm256_maddubs_epi16 multiplies unsigned 8-bit weights by signed 8-bit activations and adds
// pairs; signed weights go through the sign trick (|w| times x with w's sign). Weight blocks are
// unpacked once and reused for up to kRows activation rows. Each output element accumulates its
// blocks in the same order whatever the number of rows, so results are batch invariant.
#include "cpu_kernels.h"

#ifdef CRESCENT_NO_AVX2
namespace crescent {
const Kernels* kernels_avx2() { return nullptr; }
}  // namespace crescent
#else

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace crescent {
namespace {

constexpr int kRows = 4;

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float half(uint16_t h) { return _cvtsh_ss(h); }

// exp(x) for a vector: Cody-Waite range reduction to |r| <= ln2/2, then a degree-7 Taylor
// polynomial (relative error below 1e-7 on that range) scaled by 2^n.
inline __m256 exp256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Four activation codes (elements 4g..4g+3 of a block) in every 32-bit lane.
inline __m256i bcast4(const int8_t* p) {
  return _mm256_castps_si256(_mm256_broadcast_ss(reinterpret_cast<const float*>(p)));
}

inline __m256 load_fp16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// One row's 8 outputs of panel p -> y, dropping the padding rows past n.
inline void store_panel(__m256 acc, int row, int p, int n, float* y, int ldy) {
  float* dst = y + static_cast<size_t>(row) * ldy + p * kPanel;
  if ((p + 1) * kPanel <= n) {
    _mm256_storeu_ps(dst, acc);
  } else {
    alignas(32) float tmp[kPanel];
    _mm256_store_ps(tmp, acc);
    for (int j = 0; j < n - p * kPanel; ++j) dst[j] = tmp[j];
  }
}

// Q4 panels: per block and row, 8 maddubs (4 codes x 8 rows each) summed in int16 (|sum| <=
// 8 * 2 * 15 * 127 = 30480), one madd to int32, one conversion, and the scale and offset as
// FMAs. Each 32-byte load of codes is unpacked into two groups and used by every row at once, so
// the live registers are the R int16 sums, the R accumulators and a few temporaries (no spills).
template <int R>
void q4_rows(const QWeight& w, const Act& a, int i0, float* y, int ldy, int p0, int p1) {
  const int nb = w.k / kQ4Block;
  const uint8_t* codes = static_cast<const uint8_t*>(w.data);
  const __m256i mask = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  const int8_t* xrow[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xrow[r] = a.q + static_cast<size_t>(i0 + r) * a.k;
  for (int p = p0; p < p1; ++p) {
    __m256 acc[R];
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const size_t blk = static_cast<size_t>(p) * nb + b;
      const uint8_t* c = codes + blk * 128;
      __m256i s16[R];
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) s16[r] = _mm256_setzero_si256();
      #pragma GCC unroll 8
      for (int i = 0; i < 4; ++i) {
        const __m256i raw = load256(c + 32 * i);
        const __m256i lo = _mm256_and_si256(raw, mask);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask);
        #pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const int8_t* xq = xrow[r] + b * kQ4Block;
          s16[r] = _mm256_add_epi16(s16[r], _mm256_add_epi16(_mm256_maddubs_epi16(lo, bcast4(xq + 4 * i)),
                                                             _mm256_maddubs_epi16(hi, bcast4(xq + 16 + 4 * i))));
        }
      }
      const __m256 dv = load_fp16x8(w.d + blk * kPanel), mv = load_fp16x8(w.m + blk * kPanel);
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const size_t s = static_cast<size_t>(i0 + r) * nb + b;
        const __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(s16[r], ones));
        acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(dv, _mm256_set1_ps(a.dq[s])), f, acc[r]);
        acc[r] = _mm256_fmadd_ps(mv, _mm256_set1_ps(a.sq[s]), acc[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store_panel(acc[r], i0 + r, p, w.n, y, ldy);
  }
}

// Q8 panels: signed codes through the sign trick, int32 sums per 16-element half (two scales).
template <int R>
void q8_rows(const QWeight& w, const Act& a, int i0, float* y, int ldy, int p0, int p1) {
  const int nb = w.k / kActBlock;
  const int8_t* codes = static_cast<const int8_t*>(w.data);
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* xrow[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xrow[r] = a.q + static_cast<size_t>(i0 + r) * a.k;
  for (int p = p0; p < p1; ++p) {
    __m256 acc[R];
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const size_t blk = static_cast<size_t>(p) * nb + b;
      const int8_t* c = codes + blk * 256;
      __m256i s32[R][2];
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) s32[r][0] = s32[r][1] = _mm256_setzero_si256();
      #pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        const __m256i wq = load256(c + 32 * g);
        const __m256i wabs = _mm256_sign_epi8(wq, wq);
        #pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m256i xs = _mm256_sign_epi8(bcast4(xrow[r] + b * kActBlock + 4 * g), wq);
          s32[r][g / 4] = _mm256_add_epi32(s32[r][g / 4], _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, xs), ones));
        }
      }
      const __m256 d0 = load_fp16x8(w.d + (blk * 2) * kPanel), d1 = load_fp16x8(w.d + (blk * 2 + 1) * kPanel);
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m256 dx = _mm256_set1_ps(a.dq[static_cast<size_t>(i0 + r) * nb + b]);
        acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(d0, dx), _mm256_cvtepi32_ps(s32[r][0]), acc[r]);
        acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(d1, dx), _mm256_cvtepi32_ps(s32[r][1]), acc[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store_panel(acc[r], i0 + r, p, w.n, y, ldy);
  }
}

inline __m256 load_weights8(int format, const void* base, size_t i) {
  if (format == F32) return _mm256_loadu_ps(static_cast<const float*>(base) + i);
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + i));
  if (format == F16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // BF16
}

inline float load_weight1(int format, const void* base, size_t i) {
  if (format == F32) return static_cast<const float*>(base)[i];
  const uint16_t h = static_cast<const uint16_t*>(base)[i];
  return format == F16 ? half(h) : bf16_to_float(h);
}

template <int R>
void float_rows(const QWeight& w, const Act& a, int i0, float* y, int ldy, int n0, int n1) {
  const int k8 = w.k / 8 * 8;
  for (int j = n0; j < n1; ++j) {
    const size_t base = static_cast<size_t>(j) * w.k;
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int c = 0; c < k8; c += 8) {
      const __m256 wv = load_weights8(w.format, w.data, base + c);
      for (int r = 0; r < R; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(a.x + static_cast<size_t>(i0 + r) * a.k + c), wv, acc[r]);
    }
    for (int r = 0; r < R; ++r) {
      const float* x = a.x + static_cast<size_t>(i0 + r) * a.k;
      float tail = 0.0f;
      for (int c = k8; c < w.k; ++c) tail += x[c] * load_weight1(w.format, w.data, base + c);
      y[static_cast<size_t>(i0 + r) * ldy + j] = hsum(acc[r]) + tail;
    }
  }
}

#define CRESCENT_TILED(fn)                                                              \
  void fn##_tiled(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) { \
    int i = 0;                                                                          \
    for (; i + kRows <= a.m; i += kRows) fn<kRows>(w, a, i, y, ldy, n0, n1);            \
    switch (a.m - i) {                                                                  \
      case 3: fn<3>(w, a, i, y, ldy, n0, n1); break;                                    \
      case 2: fn<2>(w, a, i, y, ldy, n0, n1); break;                                    \
      case 1: fn<1>(w, a, i, y, ldy, n0, n1); break;                                    \
      default: break;                                                                   \
    }                                                                                   \
  }

CRESCENT_TILED(q4_rows)
CRESCENT_TILED(q8_rows)
CRESCENT_TILED(float_rows)

void linear(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1) {
  const int p0 = n0 / kPanel, p1 = (n1 + kPanel - 1) / kPanel;
  switch (w.format) {
    case Q4: return q4_rows_tiled(w, a, y, ldy, p0, p1);
    case Q8: return q8_rows_tiled(w, a, y, ldy, p0, p1);
    default: return float_rows_tiled(w, a, y, ldy, n0, n1);
  }
}

void quantize_row(const float* x, int k, int8_t* q, float* dq, float* sq) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int b = 0; b < k / kActBlock; ++b) {
    const float* xb = x + b * kActBlock;
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int t = 0; t < 4; ++t) {
      v[t] = _mm256_loadu_ps(xb + 8 * t);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[t]));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float d = _mm_cvtss_f32(m4) / 127.0f;
    const __m256 inv = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i iv[4];
    for (int t = 0; t < 4; ++t)
      iv[t] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[t], inv),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(iv[0], iv[1]), _mm256_add_epi32(iv[2], iv[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    s4 = _mm_hadd_epi32(s4, s4);
    s4 = _mm_hadd_epi32(s4, s4);
    // packs works within 128-bit lanes; the permute restores element order.
    const __m256i a01 = _mm256_packs_epi32(iv[0], iv[1]);
    const __m256i a23 = _mm256_packs_epi32(iv[2], iv[3]);
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(a01, a23), perm);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kActBlock), bytes);
    dq[b] = d;
    sq[b] = d * static_cast<float>(_mm_cvtsi128_si32(s4));
  }
}

void rmsnorm(const float* x, const float* w, float eps, int k, float* out) {
  const int k8 = k / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < k8; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  float ss = hsum(acc);
  for (int j = k8; j < k; ++j) ss += x[j] * x[j];
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(k) + eps);
  const __m256 rv = _mm256_set1_ps(r);
  for (int j = 0; j < k8; j += 8)
    _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_loadu_ps(w + j), _mm256_mul_ps(_mm256_loadu_ps(x + j), rv)));
  for (int j = k8; j < k; ++j) out[j] = w[j] * (x[j] * r);
}

void silu_mul(const float* gate, const float* up, int k, float* out) {
  const int k8 = k / 8 * 8;
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int j = 0; j < k8; j += 8) {
    const __m256 g = _mm256_loadu_ps(gate + j);
    const __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + j)));
  }
  for (int j = k8; j < k; ++j) out[j] = gate[j] / (1.0f + std::exp(-gate[j])) * up[j];
}

float dot(const float* a, const float* b, int k) {
  const int k8 = k / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < k8; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
  float s = hsum(acc);
  for (int j = k8; j < k; ++j) s += a[j] * b[j];
  return s;
}

void axpy(float alpha, const float* x, int k, float* y) {
  const int k8 = k / 8 * 8;
  const __m256 av = _mm256_set1_ps(alpha);
  for (int j = 0; j < k8; j += 8)
    _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
  for (int j = k8; j < k; ++j) y[j] += alpha * x[j];
}

float exp_shift_sum(float* x, int k, float max) {
  const int k8 = k / 8 * 8;
  const __m256 mv = _mm256_set1_ps(max);
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < k8; j += 8) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + j), mv));
    _mm256_storeu_ps(x + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float s = hsum(acc);
  for (int j = k8; j < k; ++j) { x[j] = std::exp(x[j] - max); s += x[j]; }
  return s;
}

// Attention (AttendTile). Keys go in blocks of kKeyBlock, whose K (then V) rows stay in L1 while
// every row of the tile reads them; the scores of 4 rows x 2 keys are computed together, so that
// 8 independent FMA chains hide the latency that bounds a single dot. Each score is still one
// chain over the head dimension in order, reduced by hsum and times scale, as dot computes it;
// each output element is still one fma per key in position order, as axpy computes it. A row's
// result therefore does not depend on the rows it shares a tile with (batch invariance).
constexpr int kKeyBlock = 64;

inline float dot_hd(const float* q, const float* k, int hd) {  // dot's arithmetic, hd % 8 == 0
  __m256 acc = _mm256_setzero_ps();
  for (int e = 0; e < hd; e += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + e), _mm256_loadu_ps(k + e), acc);
  return hsum(acc);
}

// s[r][j] and s[r][j + 1] for rows r < 4: keys k0 (position j) and k1 (position j + 1).
inline void scores_4x2(const float* const* q, const float* k0, const float* k1, int hd, float scale,
                       float* const* s, int j) {
  __m256 acc[4][2];
  for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int e = 0; e < hd; e += 8) {
    const __m256 x0 = _mm256_loadu_ps(k0 + e), x1 = _mm256_loadu_ps(k1 + e);
    for (int r = 0; r < 4; ++r) {
      const __m256 qv = _mm256_loadu_ps(q[r] + e);
      acc[r][0] = _mm256_fmadd_ps(qv, x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(qv, x1, acc[r][1]);
    }
  }
  for (int r = 0; r < 4; ++r) {
    s[r][j] = hsum(acc[r][0]) * scale;
    s[r][j + 1] = hsum(acc[r][1]) * scale;
  }
}

void attend(const AttendTile& a) {
  if (a.hd % 8 || a.nrows > kAttendMaxRows) {
    attend_rows(a, dot, axpy, exp_shift_sum);
    return;
  }
  const int hd = a.hd;
  int max_ctx = 0;
  for (int r = 0; r < a.nrows; ++r) max_ctx = std::max(max_ctx, a.ctx[r]);
  float* rows[kAttendMaxRows];
  for (int r = 0; r < a.nrows; ++r) rows[r] = a.scores + static_cast<size_t>(r) * a.ld;
  const float* kv[kKeyBlock];

  // Scores, key block by key block.
  for (int jb = 0; jb < max_ctx; jb += kKeyBlock) {
    const int je = std::min(jb + kKeyBlock, max_ctx);
    for (int j = jb; j < je; ++j) kv[j - jb] = a.k + attend_slot(a, j) * a.stride;
    for (int r0 = 0; r0 < a.nrows; r0 += 4) {
      const int nr = std::min(4, a.nrows - r0);
      int lim[4], common = je;
      for (int i = 0; i < nr; ++i) common = std::min(common, lim[i] = std::min(a.ctx[r0 + i], je));
      int j = jb;
      if (nr == 4)
        for (; j + 2 <= common; j += 2) scores_4x2(a.q + r0, kv[j - jb], kv[j + 1 - jb], hd, a.scale, rows + r0, j);
      for (int i = 0; i < nr; ++i)
        for (int jj = j; jj < lim[i]; ++jj) rows[r0 + i][jj] = dot_hd(a.q[r0 + i], kv[jj - jb], hd) * a.scale;
    }
  }

  // Softmax of each row.
  float inv[kAttendMaxRows];
  for (int r = 0; r < a.nrows; ++r) {
    const int n = a.ctx[r];
    float mx = -FLT_MAX;
    for (int j = 0; j < n; ++j) mx = std::max(mx, rows[r][j]);
    inv[r] = 1.0f / exp_shift_sum(rows[r], n, mx);
    std::memset(a.out[r], 0, sizeof(float) * hd);
  }

  // The weighted sum of V, key block by key block; 64 output elements stay in registers over a block.
  for (int jb = 0; jb < max_ctx; jb += kKeyBlock) {
    const int je = std::min(jb + kKeyBlock, max_ctx);
    for (int j = jb; j < je; ++j) kv[j - jb] = a.v + attend_slot(a, j) * a.stride;
    for (int r = 0; r < a.nrows; ++r) {
      const int lim = std::min(a.ctx[r], je);
      const float* s = rows[r];
      float* o = a.out[r];
      int c = 0;
      for (; c + 64 <= hd; c += 64) {
        __m256 acc[8];
        for (int i = 0; i < 8; ++i) acc[i] = _mm256_loadu_ps(o + c + 8 * i);
        for (int j = jb; j < lim; ++j) {
          const __m256 alpha = _mm256_set1_ps(s[j] * inv[r]);
          const float* x = kv[j - jb] + c;
          for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(alpha, _mm256_loadu_ps(x + 8 * i), acc[i]);
        }
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(o + c + 8 * i, acc[i]);
      }
      for (; c < hd; c += 8) {
        __m256 acc = _mm256_loadu_ps(o + c);
        for (int j = jb; j < lim; ++j)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(s[j] * inv[r]), _mm256_loadu_ps(kv[j - jb] + c), acc);
        _mm256_storeu_ps(o + c, acc);
      }
    }
  }
}

void dequantize_row(const QWeight& w, int row, float* out) { kernels_scalar()->dequantize_row(w, row, out); }

const Kernels kAvx2 = {"avx2", linear, quantize_row, rmsnorm, silu_mul, dot, axpy,
                       exp_shift_sum, dequantize_row, attend};

}  // namespace

const Kernels* kernels_avx2() { return &kAvx2; }

}  // namespace crescent

#endif  // CRESCENT_NO_AVX2
