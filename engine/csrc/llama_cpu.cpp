// One forward pass of a Llama-family decoder on the CPU, over quantized weights and the paged
// KV cache: the calling thread walks the layers and hands each parallel phase (a matmul's row
// chunks, the tokens, the attention heads) to the thread pool (thread_pool.h). The arithmetic mirrors engine/models/llama.py (the float32
// reference): pre-norm RMSNorm, rotate-half RoPE from the same cos/sin tables, grouped-query
// attention in float32 over K/V read through block tables, SwiGLU.
//
// C API (ctypes, engine/quant/native.py); every function returns 0 or a negative error code.
#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu_kernels.h"
#include "thread_pool.h"

namespace crescent {

struct LayerWeights {
  const float* attn_norm;   // [hidden]
  const float* ffn_norm;    // [hidden]
  QWeight qkv[3];           // parts of the fused Q/K/V projection, rows in that order
  int32_t num_qkv;
  int32_t pad0_;
  QWeight o;                // [hidden, q_size]
  QWeight gate_up[2];       // parts of the fused gate/up projection
  int32_t num_gate_up;
  int32_t pad1_;
  QWeight down;             // [hidden, intermediate]
  float* kv_cache;          // [2, num_blocks, block_size, num_kv_heads, head_dim]
};

struct ModelDesc {
  int32_t num_layers, hidden, num_heads, num_kv_heads, head_dim, intermediate, vocab;
  int32_t max_positions, block_size, num_blocks;
  float eps, attn_scale;
  const float* rope_cos;    // [max_positions, head_dim]
  const float* rope_sin;    // [max_positions, head_dim]
  const float* final_norm;  // [hidden]
  QWeight embed;            // [vocab, hidden]
  QWeight lm_head;          // [vocab, hidden] (the embedding again when tied)
  const LayerWeights* layers;
};

enum Error {
  kOk = 0,
  kBadToken = -1,
  kBadPosition = -2,
  kBadSlot = -3,
  kBadBlock = -4,
  kBadShape = -5,
  kBadIsa = -6,
};

namespace {

const Kernels* g_kernels = nullptr;
int g_threads = 1;
ThreadPool* g_pool = nullptr;  // never destroyed: joinable threads must not meet static destructors

ThreadPool& pool() {
  if (g_pool == nullptr) g_pool = new ThreadPool(g_threads);
  return *g_pool;
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

const Kernels* kernels() {
  if (g_kernels == nullptr) {
    const char* forced = std::getenv("CRESCENT_CPU_ISA");
    if (forced != nullptr && std::strcmp(forced, "scalar") == 0) g_kernels = kernels_scalar();
    else g_kernels = cpu_has_avx2() && kernels_avx2() != nullptr ? kernels_avx2() : kernels_scalar();
  }
  return g_kernels;
}

bool is_quantized(const QWeight& w) { return w.format == Q4 || w.format == Q8; }

// Buffers of one call: activations as float and (when needed) int8 blocks.
struct ActBuffer {
  std::vector<float> x;
  std::vector<int8_t> q;
  std::vector<float> dq, sq;
  void resize(int m, int k) {
    x.resize(static_cast<size_t>(m) * k);
    q.resize(static_cast<size_t>(m) * k);
    dq.resize(static_cast<size_t>(m) * (k / kActBlock + 1));
    sq.resize(static_cast<size_t>(m) * (k / kActBlock + 1));
  }
  Act act(int m, int k) const { return Act{m, k, x.data(), q.data(), dq.data(), sq.data()}; }
  void quantize(const Kernels* kern, int row, int k) {
    const size_t nb = static_cast<size_t>(k / kActBlock);
    kern->quantize_row(x.data() + static_cast<size_t>(row) * k, k, q.data() + static_cast<size_t>(row) * k,
                       dq.data() + row * nb, sq.data() + row * nb);
  }
};

// Rows [0, n) of several weights stacked (a fused projection), split into chunks for threads.
struct Stacked {
  const QWeight* parts;
  int num_parts;
  int chunk;
  int num_chunks() const {
    int c = 0;
    for (int p = 0; p < num_parts; ++p) c += (parts[p].n + chunk - 1) / chunk;
    return c;
  }
  bool needs_q() const {
    for (int p = 0; p < num_parts; ++p) if (is_quantized(parts[p])) return true;
    return false;
  }
  int total_n() const {
    int n = 0;
    for (int p = 0; p < num_parts; ++p) n += parts[p].n;
    return n;
  }
  void run_chunk(const Kernels* kern, int c, const Act& a, float* y, int ldy) const {
    int col = 0;
    for (int p = 0; p < num_parts; ++p) {
      const int nc = (parts[p].n + chunk - 1) / chunk;
      if (c < nc) {
        const int n0 = c * chunk, n1 = std::min(parts[p].n, n0 + chunk);
        kern->linear(parts[p], a, y + col, ldy, n0, n1);
        return;
      }
      c -= nc;
      col += parts[p].n;
    }
  }
};

// Small chunks keep one chunk's weight rows in cache while every activation row reads them.
int chunk_rows(int n, int threads) {
  const int c = n / (threads * 8);
  return std::max(1, std::min(8, c / kPanel)) * kPanel;  // whole panels of 8 rows
}

Stacked stacked(const QWeight* parts, int num, int threads) {
  int n = 0;
  for (int p = 0; p < num; ++p) n += parts[p].n;
  return Stacked{parts, num, chunk_rows(n, threads)};
}

// y[m, :] = act @ W^T over every part, row chunks spread over the pool.
void linear_phase(const Kernels* kern, const Stacked& s, const Act& a, float* y) {
  const int ldy = s.total_n();
  pool().parallel_for(s.num_chunks(), [&](int c, int) { s.run_chunk(kern, c, a, y, ldy); });
}

void rope(float* x, const float* cos, const float* sin, int head_dim) {
  const int half = head_dim / 2;
  for (int j = 0; j < half; ++j) {
    const float a = x[j], b = x[j + half];
    x[j] = a * cos[j] - b * sin[j];
    x[j + half] = b * cos[j + half] + a * sin[j + half];
  }
}

}  // namespace

extern "C" {

const char* crescent_isa() { return kernels()->name; }

int crescent_set_isa(const char* name) {
  if (std::strcmp(name, "scalar") == 0) { g_kernels = kernels_scalar(); return kOk; }
  if (std::strcmp(name, "avx2") == 0 && cpu_has_avx2() && kernels_avx2() != nullptr) {
    g_kernels = kernels_avx2();
    return kOk;
  }
  return kBadIsa;
}

int crescent_cpu_has_avx2() { return cpu_has_avx2() ? 1 : 0; }

void crescent_set_num_threads(int n) {
  n = std::max(1, n);
  if (n != g_threads) {
    delete g_pool;  // joins its workers; none is running a phase between calls
    g_pool = nullptr;
    g_threads = n;
  }
}

// y [m, w.n] = x [m, w.k] @ W^T.
int crescent_linear(const QWeight* w, int m, const float* x, float* y) {
  if (m < 0 || (is_quantized(*w) && w->k % kActBlock != 0)) return kBadShape;
  const Kernels* kern = kernels();
  ActBuffer buf;
  buf.resize(m, w->k);
  std::memcpy(buf.x.data(), x, sizeof(float) * static_cast<size_t>(m) * w->k);
  const Stacked s = stacked(w, 1, g_threads);
  if (is_quantized(*w)) pool().parallel_for(m, [&](int i, int) { buf.quantize(kern, i, w->k); });
  linear_phase(kern, s, buf.act(m, w->k), y);
  return kOk;
}

// Attention of nrows query rows q [nrows, hd] over one KV head of one sequence (Kernels::attend):
// row r attends keys 0..ctx[r]-1 of k_cache / v_cache [num_slots, stride] (this head's values at
// offset head * hd of a slot) through block table `table` of block size bs; out [nrows, hd].
int crescent_attention(int nrows, int hd, int bs, int64_t num_slots, int64_t stride, int head, float scale,
                       const float* q, const int32_t* ctx, const float* k_cache, const float* v_cache,
                       const int32_t* table, int num_table_blocks, float* out) {
  if (nrows <= 0 || hd <= 0 || bs <= 0 || head < 0 || (static_cast<int64_t>(head) + 1) * hd > stride) return kBadShape;
  int max_ctx = 0;
  for (int r = 0; r < nrows; ++r) {
    if (ctx[r] <= 0 || ctx[r] > static_cast<int64_t>(num_table_blocks) * bs) return kBadPosition;
    max_ctx = std::max(max_ctx, static_cast<int>(ctx[r]));
  }
  for (int b = 0; b < (max_ctx + bs - 1) / bs; ++b)
    if (table[b] < 0 || (static_cast<int64_t>(table[b]) + 1) * bs > num_slots) return kBadBlock;
  std::vector<const float*> q_rows(nrows);
  std::vector<float*> out_rows(nrows);
  std::vector<int> lens(ctx, ctx + nrows);
  for (int r = 0; r < nrows; ++r) {
    q_rows[r] = q + static_cast<size_t>(r) * hd;
    out_rows[r] = out + static_cast<size_t>(r) * hd;
  }
  std::vector<float> scores(static_cast<size_t>(nrows) * max_ctx);
  const AttendTile at{nrows, hd, bs, max_ctx, stride, scale, q_rows.data(), out_rows.data(), lens.data(),
                      k_cache + static_cast<int64_t>(head) * hd, v_cache + static_cast<int64_t>(head) * hd,
                      table, scores.data()};
  kernels()->attend(at);
  return kOk;
}

// logits [n, vocab] = hidden [n, hidden] @ lm_head^T (hidden already final-normed).
int crescent_logits(const ModelDesc* md, int n, const float* hidden, float* logits) {
  return crescent_linear(&md->lm_head, n, hidden, logits);
}

// One step over a flattened batch of num_tokens tokens from num_seqs sequences.
// ids, positions, slots: int64 [num_tokens]; query_start: int64 [num_seqs + 1]; seq_lens: int64
// [num_seqs]; block_tables: int32 [num_seqs, max_blocks]. Writes every layer's K/V at `slots`
// and the final-norm hidden states to out [num_tokens, hidden].
int crescent_forward(const ModelDesc* md, int num_tokens, const int64_t* ids, const int64_t* positions,
                     const int64_t* slots, int num_seqs, const int64_t* query_start,
                     const int64_t* seq_lens, const int32_t* block_tables, int max_blocks, float* out) {
  const Kernels* kern = kernels();
  const int T = num_tokens, H = md->hidden, hd = md->head_dim;
  const int nh = md->num_heads, nkv = md->num_kv_heads, group = nh / nkv;
  const int q_size = nh * hd, kv_size = nkv * hd, qkv_n = q_size + 2 * kv_size;
  const int inter = md->intermediate, bs = md->block_size;
  const int64_t num_slots = static_cast<int64_t>(md->num_blocks) * bs;
  if (T <= 0 || H % kActBlock || q_size % kActBlock || inter % kActBlock) return kBadShape;

  // Validate the step's indices before touching memory through them.
  std::vector<int> token_seq(T);
  int max_ctx = 1;
  for (int s = 0; s < num_seqs; ++s) {
    if (query_start[s] < 0 || query_start[s + 1] > T || query_start[s] > query_start[s + 1]) return kBadShape;
    if (seq_lens[s] > static_cast<int64_t>(max_blocks) * bs) return kBadBlock;
    for (int64_t t = query_start[s]; t < query_start[s + 1]; ++t) token_seq[t] = s;
    for (int64_t b = 0; b < (seq_lens[s] + bs - 1) / bs; ++b) {
      const int32_t id = block_tables[static_cast<size_t>(s) * max_blocks + b];
      if (id < 0 || id >= md->num_blocks) return kBadBlock;
    }
  }
  if (query_start[0] != 0 || query_start[num_seqs] != T) return kBadShape;
  for (int t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= md->vocab) return kBadToken;
    if (positions[t] < 0 || positions[t] >= md->max_positions || positions[t] >= seq_lens[token_seq[t]])
      return kBadPosition;
    if (slots[t] < 0 || slots[t] >= num_slots) return kBadSlot;
    max_ctx = std::max<int>(max_ctx, static_cast<int>(positions[t]) + 1);
  }

  float* x = out;  // the residual stream lives in the output buffer
  ActBuffer a_hidden, a_attn, a_mlp;
  a_hidden.resize(T, H);
  a_attn.resize(T, q_size);
  a_mlp.resize(T, inter);
  std::vector<float> qkv(static_cast<size_t>(T) * qkv_n);
  std::vector<float> gate_up(static_cast<size_t>(T) * 2 * inter);
  std::vector<float> proj(static_cast<size_t>(T) * H);

  // Attention tasks: (tile, KV head, part), a tile being up to tile_tokens consecutive tokens of
  // one sequence, whose query heads of that KV head's group are the tile's rows
  // (Kernels::attend); a task reads each key once for all its rows instead of once per row. When
  // there are fewer (tile, KV head) pairs than threads (a few decodes), each is split into
  // `parts` tasks of fewer heads (rows are independent: the same bits). The costliest tiles (rows
  // times context) come first, so that no thread is left with a long one at the end.
  struct Tile { int seq, t0, t1; };
  const int tile_tokens = std::max(1, std::min(kAttendTileTokens, kAttendMaxRows / group));
  std::vector<Tile> tiles;
  for (int s = 0; s < num_seqs; ++s)
    for (int t0 = static_cast<int>(query_start[s]); t0 < query_start[s + 1]; t0 += tile_tokens)
      tiles.push_back({s, t0, std::min(t0 + tile_tokens, static_cast<int>(query_start[s + 1]))});
  auto tile_cost = [&](const Tile& tile) { return static_cast<int64_t>(tile.t1 - tile.t0) * (positions[tile.t1 - 1] + 1); };
  std::stable_sort(tiles.begin(), tiles.end(), [&](const Tile& a, const Tile& b) { return tile_cost(a) > tile_cost(b); });

  ThreadPool& tp = pool();
  const int pairs = static_cast<int>(tiles.size()) * nkv;
  const int parts = std::min(group, std::max(1, (tp.num_threads() + pairs - 1) / pairs));
  const int part_heads = (group + parts - 1) / parts;
  int tile_rows = 0;
  for (const Tile& tile : tiles) tile_rows = std::max(tile_rows, (tile.t1 - tile.t0) * part_heads);
  std::vector<std::vector<float>> scores(tp.num_threads(), std::vector<float>(static_cast<size_t>(tile_rows) * max_ctx));
  auto for_tokens = [&](auto&& f) { tp.parallel_for(T, [&](int t, int) { f(t); }); };

  for_tokens([&](int t) { kern->dequantize_row(md->embed, static_cast<int>(ids[t]), x + static_cast<size_t>(t) * H); });
  for (int l = 0; l < md->num_layers; ++l) {
    const LayerWeights& L = md->layers[l];
    const Stacked s_qkv = stacked(L.qkv, L.num_qkv, g_threads);
    const Stacked s_o = stacked(&L.o, 1, g_threads);
    const Stacked s_gu = stacked(L.gate_up, L.num_gate_up, g_threads);
    const Stacked s_down = stacked(&L.down, 1, g_threads);
    float* k_cache = L.kv_cache;
    float* v_cache = L.kv_cache + num_slots * kv_size;

    // attention block: norm -> Q/K/V -> RoPE + KV write -> attention -> O -> residual
    for_tokens([&](int t) {
      kern->rmsnorm(x + static_cast<size_t>(t) * H, L.attn_norm, md->eps, H, a_hidden.x.data() + static_cast<size_t>(t) * H);
      if (s_qkv.needs_q()) a_hidden.quantize(kern, t, H);
    });
    linear_phase(kern, s_qkv, a_hidden.act(T, H), qkv.data());
    for_tokens([&](int t) {
      float* row = qkv.data() + static_cast<size_t>(t) * qkv_n;
      const size_t p = static_cast<size_t>(positions[t]) * hd;
      for (int h = 0; h < nh + nkv; ++h) rope(row + h * hd, md->rope_cos + p, md->rope_sin + p, hd);
      std::memcpy(k_cache + slots[t] * kv_size, row + q_size, sizeof(float) * kv_size);
      std::memcpy(v_cache + slots[t] * kv_size, row + q_size + kv_size, sizeof(float) * kv_size);
    });
    tp.parallel_for(pairs * parts, [&](int task, int thread) {
      const Tile& tile = tiles[task / (nkv * parts)];
      const int g = task / parts % nkv;
      const int h0 = g * group + task % parts * part_heads, h1 = std::min(h0 + part_heads, (g + 1) * group);
      thread_local std::vector<const float*> q_rows;
      thread_local std::vector<float*> out_rows;
      thread_local std::vector<int> ctx;
      q_rows.clear();
      out_rows.clear();
      ctx.clear();
      for (int t = tile.t0; t < tile.t1; ++t)
        for (int h = h0; h < h1; ++h) {
          q_rows.push_back(qkv.data() + static_cast<size_t>(t) * qkv_n + h * hd);
          out_rows.push_back(a_attn.x.data() + static_cast<size_t>(t) * q_size + h * hd);
          ctx.push_back(static_cast<int>(positions[t]) + 1);
        }
      if (ctx.empty()) return;
      AttendTile at{static_cast<int>(ctx.size()), hd, bs, max_ctx, kv_size, md->attn_scale,
                    q_rows.data(), out_rows.data(), ctx.data(), k_cache + g * hd, v_cache + g * hd,
                    block_tables + static_cast<size_t>(tile.seq) * max_blocks, scores[thread].data()};
      kern->attend(at);
    });
    if (s_o.needs_q()) for_tokens([&](int t) { a_attn.quantize(kern, t, q_size); });
    linear_phase(kern, s_o, a_attn.act(T, q_size), proj.data());

    // MLP block: residual -> norm -> gate/up -> SiLU * up -> down -> residual
    for_tokens([&](int t) {
      float* xt = x + static_cast<size_t>(t) * H;
      kern->axpy(1.0f, proj.data() + static_cast<size_t>(t) * H, H, xt);
      kern->rmsnorm(xt, L.ffn_norm, md->eps, H, a_hidden.x.data() + static_cast<size_t>(t) * H);
      if (s_gu.needs_q()) a_hidden.quantize(kern, t, H);
    });
    linear_phase(kern, s_gu, a_hidden.act(T, H), gate_up.data());
    for_tokens([&](int t) {
      const float* gu = gate_up.data() + static_cast<size_t>(t) * 2 * inter;
      kern->silu_mul(gu, gu + inter, inter, a_mlp.x.data() + static_cast<size_t>(t) * inter);
      if (s_down.needs_q()) a_mlp.quantize(kern, t, inter);
    });
    linear_phase(kern, s_down, a_mlp.act(T, inter), proj.data());
    for_tokens([&](int t) { kern->axpy(1.0f, proj.data() + static_cast<size_t>(t) * H, H, x + static_cast<size_t>(t) * H); });
  }
  for_tokens([&](int t) {
    float* xt = x + static_cast<size_t>(t) * H;
    kern->rmsnorm(xt, md->final_norm, md->eps, H, xt);
  });
  return kOk;
}

}  // extern "C"

}  // namespace crescent
