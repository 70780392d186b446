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

  ThreadPool& tp = pool();
  std::vector<std::vector<float>> scores(tp.num_threads(), std::vector<float>(max_ctx));
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
    tp.parallel_for(T * nh, [&](int task, int thread) {
      const int t = task / nh, h = task % nh, g = h / group;
      const int ctx = static_cast<int>(positions[t]) + 1;
      const int32_t* table = block_tables + static_cast<size_t>(token_seq[t]) * max_blocks;
      const float* q = qkv.data() + static_cast<size_t>(t) * qkv_n + h * hd;
      float* sc = scores[thread].data();
      float mx = -FLT_MAX;
      for (int j = 0; j < ctx; ++j) {
        const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
        sc[j] = kern->dot(q, k_cache + slot * kv_size + g * hd, hd) * md->attn_scale;
        mx = std::max(mx, sc[j]);
      }
      const float inv = 1.0f / kern->exp_shift_sum(sc, ctx, mx);
      float* o = a_attn.x.data() + static_cast<size_t>(t) * q_size + h * hd;
      std::memset(o, 0, sizeof(float) * hd);
      for (int j = 0; j < ctx; ++j) {
        const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
        kern->axpy(sc[j] * inv, v_cache + slot * kv_size + g * hd, hd, o);
      }
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
