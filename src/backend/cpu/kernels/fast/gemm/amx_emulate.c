/* The C model of the AMX tile instructions (amx_emulate.h): a thread's eight tiles and configuration, each
 * instruction as the instruction set reference's pseudocode describes it, faults counted. */
/* The model runs every tile product of the tests' AMX runs element by element: optimised even in Debug
 * (sanitizer) builds, where it otherwise takes most of the bf16 GEMM test's time. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#endif
#include "backend/cpu/kernels/fast/gemm/amx_emulate.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

enum { TILES = 8, MAX_ROWS = 16, MAX_COLSB = 64 };

typedef struct amx_state {
  bool configured;
  tb_amx_config config;
  _Alignas(64) uint8_t data[TILES][MAX_ROWS][MAX_COLSB];
} amx_state;

static _Thread_local amx_state state;
static atomic_ulong faults;

static bool fault(void) {
  atomic_fetch_add(&faults, 1);
  return false;
}

unsigned long tb_amx_emu_faults(void) { return atomic_load(&faults); }

void tb_amx_emu_release(void) { memset(&state, 0, sizeof state); }

/* A tile the instruction may use: the thread is configured and the tile has a shape. */
static bool usable(int tile) {
  if (!state.configured || tile < 0 || tile >= TILES || state.config.rows[tile] == 0) return fault();
  return true;
}

static bool valid_config(const tb_amx_config *c) {
  if (c->palette_id != 1 || c->start_row != 0) return false;
  for (int i = 0; i < 14; i++)
    if (c->reserved[i]) return false;
  for (int t = 0; t < 16; t++) {
    bool in_palette = t < TILES;
    if (!in_palette && (c->rows[t] || c->colsb[t])) return false;
    if (c->rows[t] > MAX_ROWS || c->colsb[t] > MAX_COLSB || (c->rows[t] == 0) != (c->colsb[t] == 0)) return false;
  }
  return true;
}

void tb_amx_emu_loadconfig(const tb_amx_config *config) {
  memset(&state, 0, sizeof state);
  if (config->palette_id == 0) return; /* palette 0: back to the initial, unconfigured state */
  if (!valid_config(config)) {
    fault();
    return;
  }
  state.config = *config;
  state.configured = true;
}

void tb_amx_emu_storeconfig(tb_amx_config *config) {
  if (state.configured)
    *config = state.config;
  else
    memset(config, 0, sizeof *config);
}

void tb_amx_emu_zero(int tile) {
  if (usable(tile)) memset(state.data[tile], 0, sizeof state.data[tile]);
}

void tb_amx_emu_load(int tile, const void *base, long stride) {
  if (!usable(tile)) return;
  int rows = state.config.rows[tile], colsb = state.config.colsb[tile];
  memset(state.data[tile], 0, sizeof state.data[tile]);
  for (int r = 0; r < rows; r++) memcpy(state.data[tile][r], (const uint8_t *)base + (long)r * stride, (size_t)colsb);
}

void tb_amx_emu_store(int tile, void *base, long stride) {
  if (!usable(tile)) return;
  int rows = state.config.rows[tile], colsb = state.config.colsb[tile];
  for (int r = 0; r < rows; r++) memcpy((uint8_t *)base + (long)r * stride, state.data[tile][r], (size_t)colsb);
}

/* bf16 bits to float with denormals read as zero (TDPBF16PS ignores MXCSR.DAZ and always does this). */
static float bf16_daz(const uint8_t *p) {
  uint32_t bits = (uint32_t)(p[0] | p[1] << 8) << 16;
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static float flush_subnormal(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
  memcpy(&x, &bits, sizeof x);
  return x;
}

void tb_amx_emu_dpbf16ps(int dst, int a, int b) {
  if (!usable(dst) || !usable(a) || !usable(b)) return;
  const tb_amx_config *c = &state.config;
  int m_rows = c->rows[dst], n = c->colsb[dst] / 4, k = c->colsb[a] / 4;
  /* the shape checks of the reference: distinct tiles, a is m x k pairs, b is k x n pairs, dst m x n */
  if (dst == a || dst == b || a == b || c->rows[a] != m_rows || c->rows[b] != k || c->colsb[b] != c->colsb[dst] ||
      c->colsb[dst] % 4 || c->colsb[a] % 4) {
    fault();
    return;
  }
  float av[MAX_ROWS][MAX_COLSB / 2], bv[MAX_ROWS][MAX_COLSB / 2]; /* the bf16 halves widened, once */
  for (int r = 0; r < MAX_ROWS; r++)
    for (int h = 0; h < MAX_COLSB / 2; h++) {
      av[r][h] = bf16_daz(&state.data[a][r][2 * h]);
      bv[r][h] = bf16_daz(&state.data[b][r][2 * h]);
    }
  for (int m = 0; m < m_rows; m++) {
    float row[MAX_COLSB / 4];
    memcpy(row, state.data[dst][m], sizeof row);
    for (int q = 0; q < k; q++)
      for (int j = 0; j < n; j++) {
        row[j] = flush_subnormal(row[j] + av[m][2 * q] * bv[q][2 * j]);
        row[j] = flush_subnormal(row[j] + av[m][2 * q + 1] * bv[q][2 * j + 1]);
      }
    memset(state.data[dst][m], 0, MAX_COLSB);
    memcpy(state.data[dst][m], row, (size_t)n * 4);
  }
}
