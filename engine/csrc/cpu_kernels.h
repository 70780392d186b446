// CPU kernels of the quantized fast path: shared types and the kernel table.
//
// Weight formats (after the loader's repack, engine/quant/formats.py):
//   F32 / F16 / BF16: row-major values [n, k].
//   Q4: 4-bit unsigned codes q in [0, 15], blocks of 32 along k, w = d * q + m with an fp16
//       scale d and offset m per block; Q4_0, Q4_1 and Q4_K repack into it.
//   Q8: int8 codes, w = d * q with an fp16 scale d per 16 elements along k; Q8_0, Q6_K and
//       --quantization int8 repack into it.
// Both quantized formats interleave panels of 8 rows (rows 8p..8p+7; n is padded to a multiple
// of 8 with zero rows), so that one 256-bit register holds 4 consecutive codes of each of the 8
// rows and one multiply-add serves 8 outputs (the idea of ggml's repacked Q4_0_8x8 layout):
//   Q4 codes: uint8 [panels, k/32, 4, 32]; in register i of a block, byte 4r + j holds element
//       4i + j of row r in its low nibble and element 16 + 4i + j in its high nibble.
//       d, m: fp16 [panels, k/32, 8].
//   Q8 codes: int8 [panels, k/32, 8, 32]; in group g, byte 4r + j is element 4g + j of row r.
//       d: fp16 [panels, k/32, 2, 8] (the scales of elements 0-15 and 16-31 of each row).
// Activations for the quantized formats are quantized on the fly per block of 32 to int8
// (symmetric, scale = max|x| / 127, round half to even), as ggml's Q8_0 (llama.cpp, ggml-quants.c).
#pragma once

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace crescent {

enum Format : int32_t { F32 = 0, F16 = 1, BF16 = 2, Q4 = 3, Q8 = 4 };

constexpr int kQ4Block = 32;
constexpr int kActBlock = 32;
constexpr int kPanel = 8;

// One weight matrix [n, k] (PyTorch's Linear layout: out x in).
struct QWeight {
  int32_t format;
  int32_t n;
  int32_t k;
  int32_t pad_;
  const void* data;     // values or codes, layouts above
  const uint16_t* d;    // Q4 / Q8 scales; else null
  const uint16_t* m;    // Q4 offsets; else null
};

// Activations of m rows, float and (when a quantized weight reads them) int8 per block of 32.
struct Act {
  int m;
  int k;
  const float* x;       // [m, k]
  const int8_t* q;      // [m, k] or null
  const float* dq;      // [m, k/32] scale of each block
  const float* sq;      // [m, k/32] dq * sum of the block's codes (Q4's offset term)
};

constexpr int kAttendMaxRows = 64;    // rows of one AttendTile that kernels tile (more: row by row)
constexpr int kAttendTileTokens = 16;  // tokens of one sequence in one attention task (llama_cpu.cpp)

// Attention of nrows query rows that read the same KV head of one sequence (the rows of one
// attention task: the query heads of a KV head group, for one or more of the sequence's tokens).
// Row r attends keys 0..ctx[r]-1; key j lives at slot(j) = table[j / bs] * bs + j % bs, its K
// at k + slot(j) * stride and its V at v + slot(j) * stride. Writes
// out[r] = sum_j softmax_j(scale * q[r] . K_j) V_j [hd]. scores: workspace [nrows, ld], ld >= max ctx.
struct AttendTile {
  int nrows;
  int hd;
  int bs;
  int ld;
  int64_t stride;            // floats from one slot's K (or V) to the next slot's
  float scale;
  const float* const* q;     // [nrows] query rows [hd]
  float* const* out;         // [nrows] output rows [hd]
  const int* ctx;            // [nrows]
  const float* k;            // K of slot 0 at this KV head
  const float* v;            // V of slot 0 at this KV head
  const int32_t* table;      // the sequence's block table
  float* scores;
};

inline int64_t attend_slot(const AttendTile& a, int j) {
  return static_cast<int64_t>(a.table[j / a.bs]) * a.bs + j % a.bs;
}

// Kernels::attend row by row through one instruction set's dot, axpy and exp_shift_sum: the
// scalar kernel, and the AVX2 kernel's path for a head size that is not a multiple of 8.
template <class Dot, class Axpy, class ExpShiftSum>
inline void attend_rows(const AttendTile& a, Dot dot, Axpy axpy, ExpShiftSum exp_shift_sum) {
  for (int r = 0; r < a.nrows; ++r) {
    float* sc = a.scores + static_cast<size_t>(r) * a.ld;
    const int n = a.ctx[r];
    float mx = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
      sc[j] = dot(a.q[r], a.k + attend_slot(a, j) * a.stride, a.hd) * a.scale;
      mx = std::max(mx, sc[j]);
    }
    const float inv = 1.0f / exp_shift_sum(sc, n, mx);
    std::memset(a.out[r], 0, sizeof(float) * a.hd);
    for (int j = 0; j < n; ++j) axpy(sc[j] * inv, a.v + attend_slot(a, j) * a.stride, a.hd, a.out[r]);
  }
}

// The vector kernels one instruction set provides. Every function works on a slice so that the
// caller owns the threading; each output element's arithmetic is independent of the slice and
// of how many rows the call covers (batch invariance).
struct Kernels {
  const char* name;
  // y[i, j] for rows i < a.m and weight rows j in [n0, n1); y has leading dimension ldy.
  // For Q4 / Q8, n0 is a multiple of 8 and n1 is too unless it is n.
  void (*linear)(const QWeight& w, const Act& a, float* y, int ldy, int n0, int n1);
  // Row i of x [k] -> q [k], dq [k/32], sq [k/32].
  void (*quantize_row)(const float* x, int k, int8_t* q, float* dq, float* sq);
  // out = x / sqrt(mean(x^2) + eps) * w, k elements.
  void (*rmsnorm)(const float* x, const float* w, float eps, int k, float* out);
  // out[j] = silu(gate[j]) * up[j].
  void (*silu_mul)(const float* gate, const float* up, int k, float* out);
  // sum_j a[j] * b[j].
  float (*dot)(const float* a, const float* b, int k);
  // y += alpha * x.
  void (*axpy)(float alpha, const float* x, int k, float* y);
  // x[j] = exp(x[j] - max); returns the sum.
  float (*exp_shift_sum)(float* x, int k, float max);
  // Row `row` of w as float32 [k].
  void (*dequantize_row)(const QWeight& w, int row, float* out);
  // One attention tile (AttendTile). Each row's arithmetic is that of dot for its scores (times
  // scale), exp_shift_sum for their softmax and axpy for the weighted sum of V, key by key in
  // position order, whichever rows share its tile.
  void (*attend)(const AttendTile& a);
};

const Kernels* kernels_scalar();
const Kernels* kernels_avx2();  // null when the library was built without it

// fp16 / bf16 bit patterns to float (portable).
float fp16_to_float(uint16_t h);
inline float bf16_to_float(uint16_t b) {
  union { uint32_t u; float f; } v;
  v.u = static_cast<uint32_t>(b) << 16;
  return v.f;
}

}  // namespace crescent
