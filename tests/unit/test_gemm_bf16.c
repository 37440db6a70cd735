/* The bf16 GEMM (src/backend/cpu/kernels/fast/gemm/gemm_bf16*.c) on every path this CPU can run (portable and the
 * AMX kernel on the C model of the tile instructions always, AVX512-BF16 and AMX when cpuid has them): the
 * C model itself against hand-worked tiles, the AMX packing layouts, the self-check, the rounding and
 * packing against tb_convert's bf16 bits; the driver against a naive double-precision product of the
 * bf16-rounded inputs over many shapes, every operand kind (plain, transposed, packed once, packed on demand
 * by a pack function), alpha/beta, the epilogues, a 2-thread pool (bit-identical to serial); and the
 * level-3 MatMul / Gemm / tb::FusedMatMul / tb::FusedGemm entries against the level-0 fp32 reference kernels
 * within the validate table's bf16 tolerance, against the portable bf16 path, with weights packed by
 * prepare(), and their choice under feature masks.
 *
 * Tolerance of the driver check: the products of two bf16 values are exact in fp32, so only the fp32 sums
 * differ from the exact sum of the rounded inputs: by at most gamma_k * sum|a_i b_i| with gamma_k ~ k * 2^-24
 * in any summation order, plus one rounding each for alpha, beta * C and the result; we allow (k + 4) * 2^-24 *
 * (|alpha| sum|ab| + |beta c|), which no correct order can exceed and a wrong element or index would. */
#include <float.h>
#include <math.h>
#include <tensorbridge/validate.h>
#include "backend/cpu/kernels/fast/gemm/amx_emulate.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_amx_pack.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/convert_features.h"
#include "core/convert_scalar.h"
#include "core/threadpool.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

/* Every path that runs here: portable and the AMX kernel on the C model of the tiles always, AVX512-BF16
 * and AMX when this CPU has them. */
static bool runs_here(int p) {
  if (p == TB_GEMM_BF16_AMX) return tb_gemm_bf16_amx_ready();
  if (p == TB_GEMM_BF16_AVX512BF16) return tbt_cpu_has_bf16_path() && tb_gemm_bf16_kernel_avx512bf16.ukr;
  uint64_t need = tb_gemm_bf16_path_features((tb_gemm_bf16_path)p);
  return (tb_convert_hardware_features() & need) == need;
}
#define FOR_EACH_PATH(p)                                   \
  for (int p = 0; p < TB_GEMM_BF16_PATH_COUNT; p++)        \
    if (runs_here(p))

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

static void fill(float *x, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t i = 0; i < n; i++) x[i] = (float)((double)(rng_next(&s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* Faults the test of the C model of AMX causes on purpose; every other run on the model must add none. */
static unsigned long deliberate_faults;

static double bf(float x) { return (double)tb_minifloat_to_float(TB_MINIFLOAT_BF16, tb_f32_to_bf16_ref(x)); }

/* ---- rounding and packing ---- */

static void rounding_matches_tb_convert(void **state) {
  (void)state;
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00008000u, 0x00018000u,
                                      0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x7F7FFFFFu, 0x7F7F8000u, 0xFF7F8001u,
                                      0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC00000u, 0x7FBFFFFFu, 0x3FFFFFFFu};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
    float x;
    memcpy(&x, &specials[i], sizeof x);
    if (tb_bf16_round(x) != tb_f32_to_bf16_ref(x))
      fail_msg("bits 0x%08x: 0x%04x, tb_convert gives 0x%04x", specials[i], tb_bf16_round(x), tb_f32_to_bf16_ref(x));
  }
  uint64_t s = 99;
  for (int i = 0; i < 200000; i++) {
    uint32_t bits = (uint32_t)(rng_next(&s) >> 32);
    float x;
    memcpy(&x, &bits, sizeof x);
    if (tb_bf16_round(x) != tb_f32_to_bf16_ref(x)) fail_msg("bits 0x%08x rounds differently from tb_convert", bits);
  }
  assert_true(tb_bf16_to_float(0x3F80) == 1.0f && tb_bf16_to_float(0xC040) == -3.0f);
}

/* The documented layout, by hand: (p, o) at ((p / 2) * width + o) * 2 + p % 2, zeros past the edges. */
static void packed_layout_is_pair_interleaved(void **state) {
  (void)state;
  const float src[3][2] = {{1, 2}, {3, 4}, {5, 6}}; /* element (p, o) at src[p][o]: kc 3, 2 lines */
  uint16_t dst[2 * 4 * 2];
  memset(dst, 0xAB, sizeof dst);
  tb_gemm_bf16_kernel_portable.pack_o_contiguous(&src[0][0], 2, 3, 2, 4, dst);
  const float want[16] = {1, 3, 2, 4, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0};
  for (int i = 0; i < 16; i++)
    if (tb_bf16_to_float(dst[i]) != want[i]) fail_msg("packed element %d is %g, expected %g", i, tb_bf16_to_float(dst[i]), want[i]);
  const float srct[2][3] = {{1, 3, 5}, {2, 4, 6}}; /* the same operand with p contiguous */
  uint16_t dst2[16];
  memset(dst2, 0xAB, sizeof dst2);
  tb_gemm_bf16_kernel_portable.pack_p_contiguous(&srct[0][0], 3, 3, 2, 4, dst2);
  assert_memory_equal(dst, dst2, sizeof dst);
}

/* Every path's packing gives the portable packing's bits (specials included), for both source layouts, odd
 * depths, partial slivers, and the widths the micro-kernels use. */
static void packing_paths_agree(void **state) {
  (void)state;
  if (!runs_here(TB_GEMM_BF16_AVX512BF16)) TBT_SKIP("no AVX512-BF16 on this CPU: the portable packing is the only one");
  enum { LINES = 40, DEPTH = 45 };
  float src[LINES * DEPTH];
  fill(src, LINES * DEPTH, 5);
  const uint32_t odd[] = {0x7F800001u, 0xFF800000u, 0x00000001u, 0x3F818000u, 0x7F7FFFFFu};
  for (size_t i = 0; i < 5; i++) memcpy(&src[i * 37], &odd[i], sizeof(float));
  const int widths[] = {4, 14, 16, 32};
  for (int w = 0; w < 4; w++)
    for (int64_t kc = 1; kc <= DEPTH; kc += 11)
      for (int64_t outer = 1; outer <= widths[w]; outer += 3) {
        uint16_t a[DEPTH * 32 + 64], b[DEPTH * 32 + 64];
        size_t bytes = (size_t)((kc + 1) / 2 * widths[w] * 2) * sizeof(uint16_t);
        tb_gemm_bf16_kernel_portable.pack_o_contiguous(src, LINES, kc, outer, widths[w], a);
        tb_gemm_bf16_kernel_avx512bf16.pack_o_contiguous(src, LINES, kc, outer, widths[w], b);
        if (memcmp(a, b, bytes)) fail_msg("o-contiguous packing differs: width %d kc %lld outer %lld", widths[w], (long long)kc, (long long)outer);
        tb_gemm_bf16_kernel_portable.pack_p_contiguous(src, DEPTH, kc, outer, widths[w], a);
        tb_gemm_bf16_kernel_avx512bf16.pack_p_contiguous(src, DEPTH, kc, outer, widths[w], b);
        if (memcmp(a, b, bytes)) fail_msg("p-contiguous packing differs: width %d kc %lld outer %lld", widths[w], (long long)kc, (long long)outer);
      }
}

/* The AMX kernel's packing (the same code on the hardware and on the C model): B in the shared
 * pair-interleaved layout, A line by line, both with the portable rounding's bits and zeros up to whole
 * tiles of 16 pairs, for both source layouts, odd depths and partial slivers. */
static void amx_packing_is_line_and_pair_layout(void **state) {
  (void)state;
  enum { LINES = 40, DEPTH = 45, MAX = 64 * 32 };
  const tb_gemm_bf16_kernel *amx = &tb_gemm_bf16_kernel_amx_emulated, *port = &tb_gemm_bf16_kernel_portable;
  assert_int_equal(amx->mr, 32);
  assert_int_equal(amx->nr, 32);
  assert_int_equal(tb_gemm_bf16_pairs(amx, 1), 16);
  assert_int_equal(tb_gemm_bf16_pairs(amx, 33), 32);
  assert_int_equal(tb_gemm_bf16_pairs(port, 33), 17);
  float src[LINES * DEPTH];
  fill(src, LINES * DEPTH, 6);
  const uint32_t odd[] = {0x7F800001u, 0xFF800000u, 0x00000001u, 0x3F818000u};
  for (size_t i = 0; i < 4; i++) memcpy(&src[i * 41], &odd[i], sizeof(float));
  for (int64_t kc = 1; kc <= DEPTH; kc += 11)
    for (int64_t outer = 1; outer <= 32; outer += 5)
      for (int contiguous = 0; contiguous < 2; contiguous++) {
        uint16_t want[MAX], b[MAX], a[MAX];
        int64_t kp = (kc + 1) / 2, kpp = tb_gemm_bf16_pairs(amx, kc);
        int64_t ld = contiguous ? DEPTH : LINES;
        tb_gemm_bf16_pack_fn port_pack = contiguous ? port->pack_p_contiguous : port->pack_o_contiguous;
        port_pack(src, ld, kc, outer, 32, want);
        (contiguous ? amx->pack_p_contiguous : amx->pack_o_contiguous)(src, ld, kc, outer, 32, b);
        (contiguous ? amx->pack_a_p_contiguous : amx->pack_a_o_contiguous)(src, ld, kc, outer, 32, a);
        for (int64_t q = 0; q < kpp; q++)
          for (int64_t o = 0; o < 32; o++)
            for (int64_t h = 0; h < 2; h++) {
              uint16_t expect = q < kp ? want[(q * 32 + o) * 2 + h] : 0;
              if (b[(q * 32 + o) * 2 + h] != expect || a[o * kpp * 2 + q * 2 + h] != expect)
                fail_msg("AMX packing (%s source) kc %lld outer %lld: pair %lld line %lld half %lld is B %04x A %04x, "
                         "expected %04x", contiguous ? "p-contiguous" : "o-contiguous", (long long)kc, (long long)outer,
                         (long long)q, (long long)o, (long long)h, b[(q * 32 + o) * 2 + h], a[o * kpp * 2 + q * 2 + h], expect);
            }
      }
  /* the AVX-512 packing gives the plain C packing's bits, padding included, for every kind and both widths
   * of 16-line blocks */
  if (!tb_amx_pack_avx512_runs()) return;
  for (int kind = TB_AMX_PACK_A_O; kind <= TB_AMX_PACK_B_P; kind++)
    for (int width = 16; width <= 32; width += 16)
      for (int64_t kc = 1; kc <= DEPTH; kc += 4)
        for (int64_t outer = 1; outer <= width; outer += 5) {
          uint16_t plain[MAX], vector[MAX];
          memset(vector, 0xAB, sizeof vector);
          bool o_contiguous = kind == TB_AMX_PACK_A_O || kind == TB_AMX_PACK_B_O;
          int64_t ld = o_contiguous ? LINES : DEPTH, count = tb_gemm_bf16_pairs(amx, kc) * 2 * width;
          tb_amx_pack((tb_amx_pack_kind)kind, false, src, ld, kc, outer, width, plain);
          tb_amx_pack((tb_amx_pack_kind)kind, true, src, ld, kc, outer, width, vector);
          if (memcmp(plain, vector, (size_t)count * sizeof(uint16_t)))
            fail_msg("AMX packing kind %d width %d kc %lld outer %lld: AVX-512 differs from plain C", kind, width,
                     (long long)kc, (long long)outer);
        }
}

/* The C model of the tile instructions against the reference's pseudocode on a few values by hand:
 * loads zero what the configuration leaves out, tdpbf16ps sums pairs with subnormal inputs read as zero,
 * and what real tiles fault on (no configuration, a bad one, mismatched shapes) is counted. */
static void amx_model_follows_the_reference(void **state) {
  (void)state;
  unsigned long faults = tb_amx_emu_faults();
  tb_amx_emu_release();
  tb_amx_emu_zero(0); /* not configured: #UD */
  assert_int_equal(tb_amx_emu_faults(), faults + 1);
  tb_amx_config bad = {.palette_id = 1, .colsb = {64}, .rows = {17}};
  tb_amx_emu_loadconfig(&bad); /* 17 rows: #GP */
  assert_int_equal(tb_amx_emu_faults(), faults + 2);
  /* tile 0: 2 x 2 fp32; tile 1: A, 2 rows x 2 pairs; tile 2: B, 2 pairs x 2 columns */
  tb_amx_config cfg = {.palette_id = 1, .colsb = {8, 8, 8}, .rows = {2, 2, 2}};
  tb_amx_emu_loadconfig(&cfg);
  tb_amx_config back;
  tb_amx_emu_storeconfig(&back);
  assert_memory_equal(&back, &cfg, sizeof cfg);
  /* A row m = [a(m,0) a(m,1) | a(m,2) a(m,3)] as bf16; B pair-row q = [b(2q,0) b(2q+1,0) | b(2q,1) b(2q+1,1)] */
  const uint16_t one = 0x3F80, two = 0x4000, half = 0x3F00, tiny = 0x0001 /* subnormal */, minus = 0xBF80;
  uint16_t a[2][4] = {{one, two, half, tiny}, {minus, one, two, two}};
  uint16_t b[2][4] = {{one, two, half, one}, {two, tiny, one, minus}};
  float c[2][2] = {{10, 20}, {30, 40}}, out[2][4];
  tb_amx_emu_load(0, c, sizeof c[0]);
  tb_amx_emu_load(1, a, sizeof a[0]);
  tb_amx_emu_load(2, b, sizeof b[0]);
  tb_amx_emu_dpbf16ps(0, 1, 2);
  memset(out, 0x55, sizeof out);
  tb_amx_emu_store(0, out, sizeof out[0]);
  /* c(m, n) += sum over k of a(m, k) b(k, n), b(k, n) = b[k / 2][2 n + k % 2], the subnormal as zero */
  assert_true(out[0][0] == 10 + 1 * 1 + 2 * 2 + 0.5f * 2 + 0);
  assert_true(out[0][1] == 20 + 1 * 0.5f + 2 * 1 + 0.5f * 1 + 0);
  assert_true(out[1][0] == 30 - 1 * 1 + 1 * 2 + 2 * 2 + 0);
  assert_true(out[1][1] == 40 - 1 * 0.5f + 1 * 1 + 2 * 1 + 2 * -1);
  uint32_t untouched;
  memcpy(&untouched, &out[0][2], sizeof untouched);
  assert_int_equal(untouched, 0x55555555u); /* a store writes colsb bytes per row, no more */
  assert_int_equal(tb_amx_emu_faults(), faults + 2);
  tb_amx_emu_dpbf16ps(0, 0, 2); /* dst used as a source: #UD */
  tb_amx_emu_dpbf16ps(0, 3, 2); /* tile 3 has no shape: #UD */
  assert_int_equal(tb_amx_emu_faults(), faults + 4);
  deliberate_faults += 4;
  tb_amx_emu_release();
}

/* The self-check passes on every path that runs here (the AMX kernel on the C model included), AMX is only
 * ready where cpuid has it, and a feature mask claiming AMX (a recorded cpuid) still gets a path that runs. */
static void amx_readiness_and_self_check(void **state) {
  (void)state;
  char why[300] = "";
  FOR_EACH_PATH(p) {
    if (!tb_gemm_bf16_self_check((tb_gemm_bf16_path)p, why, sizeof why)) fail_msg("self-check: %s", why);
  }
  assert_int_equal(tb_amx_emu_faults(), deliberate_faults);
  uint64_t hw = tb_convert_hardware_features();
  uint64_t amx = TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16);
  assert_int_equal(tb_gemm_bf16_path_features(TB_GEMM_BF16_AMX), amx | tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16));
  assert_int_equal(tb_gemm_bf16_path_features(TB_GEMM_BF16_AMX_EMULATED), 0);
  if ((hw & amx) != amx) {
    assert_false(tb_gemm_bf16_amx_ready());
    assert_int_equal(tb_gemm_bf16_path_for(hw | amx), tb_gemm_bf16_path_for(hw));
    assert_int_equal(tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX), tb_gemm_bf16_path_for(hw));
  } else if (tb_gemm_bf16_amx_ready()) {
    assert_int_equal(tb_gemm_bf16_path_for(hw), TB_GEMM_BF16_AMX);
  }
  assert_int_equal(tb_gemm_bf16_runnable(TB_GEMM_BF16_AVX512BF16), TB_GEMM_BF16_AVX512BF16);
  assert_string_equal(tb_gemm_bf16_path_name(TB_GEMM_BF16_AMX), "amx");
  assert_string_equal(tb_gemm_bf16_path_name(TB_GEMM_BF16_AMX_EMULATED), "amx-emulated");
}

/* ---- the driver ---- */

enum { PLAIN = 0, TRANSPOSED, PACKED, PACK_FN, N_MODES };
static const char *const mode_names[] = {"plain", "transposed", "packed", "pack-fn"};

/* A pack function over a row-major matrix holding op(X) as rows (A: m x k) or columns (B: k x n). */
typedef struct fn_src {
  const float *x; /* op(X) stored plain: A m x k (ld k), B k x n (ld n) */
  int64_t ld;
  bool is_a;
} fn_src;

static void pack_by_fn(void *ctx, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst) {
  const fn_src *f = ctx;
  for (int64_t s = 0; s < outer; s += width, dst += kc * width)
    for (int64_t p = 0; p < kc; p++)
      for (int64_t o = 0; o < width; o++) {
        int64_t line = o0 + s + o;
        dst[p * width + o] = s + o >= outer ? 0.0f : f->is_a ? f->x[line * f->ld + p0 + p] : f->x[(p0 + p) * f->ld + line];
      }
}

/* An operand holding op(X) (rows x cols, row-major in x) in the given mode; *store and *packed are freed by
 * the caller. */
static tb_gemm_bf16_operand operand(tb_gemm_bf16_path path, int mode, bool is_a, const float *x, int64_t rows,
                                    int64_t cols, fn_src *fn, float **store, tb_gemm_bf16_packed **packed) {
  *store = NULL;
  *packed = NULL;
  tb_gemm_bf16_operand op = {.data = x, .ld = cols};
  if (mode == TRANSPOSED) {
    float *t = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(float));
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) t[j * rows + i] = x[i * cols + j];
    op = (tb_gemm_bf16_operand){.data = t, .ld = rows, .trans = true};
    *store = t;
  } else if (mode == PACK_FN) {
    *fn = (fn_src){x, cols, is_a};
    op = (tb_gemm_bf16_operand){.pack = pack_by_fn, .pack_ctx = fn};
  } else if (mode == PACKED) {
    *packed = is_a ? tb_gemm_bf16_pack_a(path, &op, rows, cols) : tb_gemm_bf16_pack_b(path, &op, rows, cols);
    assert_non_null(*packed);
    op = (tb_gemm_bf16_operand){.packed = *packed};
  }
  return op;
}

static double act_ref(const tb_gemm_epilogue *ep, double x) {
  switch (ep ? ep->act : 0) {
    case 1: return x < 0 ? 0 : x;
    case 2: return x < 0 ? ep->act_alpha * x : x;
    case 3: return x < ep->act_min ? ep->act_min : x > ep->act_max ? ep->act_max : x;
    case 4: return 1 / (1 + exp(-x));
    case 5: return tanh(x);
    case 6: return fmax(0, fmin(1, ep->act_alpha * x + ep->act_beta));
    case 7: return x * fmax(0, fmin(1, x / 6 + 0.5));
    default: return x;
  }
}

typedef struct gemm_case {
  int64_t m, n, k;
  float alpha, beta;
  int mode_a, mode_b;
  const tb_gemm_epilogue *ep;
  bool residual_is_c;
  tb_pool *pool;
  bool check; /* false: only run (the caller compares the bits with a checked run) */
} gemm_case;

/* Run one case on one path; check against the naive product of the rounded inputs. Returns C (free it). */
static float *check_case(tb_gemm_bf16_path path, const gemm_case *g) {
  int64_t m = g->m, n = g->n, k = g->k;
  float *a = malloc((size_t)(m * k + 1) * sizeof(float)), *b = malloc((size_t)(k * n + 1) * sizeof(float));
  float *c = malloc((size_t)(m * n) * sizeof(float)), *c0 = malloc((size_t)(m * n) * sizeof(float));
  assert_true(a && b && c && c0);
  fill(a, m * k, (uint64_t)(m * 131 + k));
  fill(b, k * n, (uint64_t)(n * 17 + k * 3));
  fill(c0, m * n, (uint64_t)(m + n));
  if (g->beta == 0)
    for (int64_t i = 0; i < m * n; i++) c0[i] = NAN; /* beta 0 must not read C */
  memcpy(c, c0, (size_t)(m * n) * sizeof(float));
  tb_gemm_epilogue ep = g->ep ? *g->ep : (tb_gemm_epilogue){0};
  if (g->residual_is_c) {
    ep.residual = c;
    ep.ld_residual = n;
  }
  fn_src fa, fb;
  float *sa, *sb;
  tb_gemm_bf16_packed *pa, *pb;
  tb_gemm_bf16_operand oa = operand(path, g->mode_a, true, a, m, k, &fa, &sa, &pa);
  tb_gemm_bf16_operand ob = operand(path, g->mode_b, false, b, k, n, &fb, &sb, &pb);
  assert_true(tb_gemm_bf16_run(path, m, n, k, g->alpha, &oa, &ob, g->beta, c, n, g->ep || g->residual_is_c ? &ep : NULL, g->pool));
  if (tb_amx_emu_faults() != deliberate_faults) fail_msg("%s: the C model of AMX saw an instruction real tiles would fault on", tb_gemm_bf16_path_name(path));
  double *ra = malloc((size_t)(m * k + 1) * sizeof(double)), *rb = malloc((size_t)(k * n + 1) * sizeof(double));
  assert_true(ra && rb);
  for (int64_t i = 0; i < m * k; i++) ra[i] = bf(a[i]);
  for (int64_t i = 0; i < k * n; i++) rb[i] = bf(b[i]);
  for (int64_t i = 0; g->check && i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0, sabs = 0;
      for (int64_t p = 0; p < k; p++) {
        double x = ra[i * k + p] * rb[p * n + j];
        s += x;
        sabs += fabs(x);
      }
      double old = g->beta == 0 ? 0 : (double)g->beta * c0[i * n + j];
      double pre = (double)g->alpha * s + old;
      double tol = (double)(k + 4) * FLT_EPSILON / 2 * (fabs(g->alpha) * sabs + fabs(old));
      double extra = 0;
      if (ep.bias) extra += ep.bias[ep.bias_axis == 0 ? i : j];
      if (ep.residual) extra += g->residual_is_c ? c0[i * n + j] : ep.residual[i * ep.ld_residual + j];
      double ref = act_ref(&ep, pre + extra);
      if (ep.bias || ep.residual || ep.act) tol = 2 * (tol + FLT_EPSILON * 2 * (fabs(pre) + fabs(extra))) + 4e-7 * fabs(ref);
      double err = fabs((double)c[i * n + j] - ref);
      if (!(err <= tol + 1e-30))
        fail_msg("%s path, %lldx%lldx%lld A %s B %s alpha %g beta %g act %d: C[%lld][%lld] = %.9g, expected %.9g (tol %g)",
                 tb_gemm_bf16_path_name(path), (long long)m, (long long)n, (long long)k, mode_names[g->mode_a],
                 mode_names[g->mode_b], g->alpha, g->beta, ep.act, (long long)i, (long long)j, c[i * n + j], ref, tol);
    }
  free(a);
  free(b);
  free(ra);
  free(rb);
  free(c0);
  free(sa);
  free(sb);
  tb_gemm_bf16_packed_free(pa);
  tb_gemm_bf16_packed_free(pb);
  return c;
}

static void check(tb_gemm_bf16_path path, gemm_case g) { free(check_case(path, &g)); }

static void driver_every_dim_and_operand_kind(void **state) {
  (void)state;
  FOR_EACH_PATH(p)
    for (int64_t d = 1; d <= 67; d++) {
      int ma = (int)(d % N_MODES), mb = (int)((d / N_MODES) % N_MODES);
      check((tb_gemm_bf16_path)p, (gemm_case){d, 37, 19, 1, 0, ma, mb, NULL, false, NULL, true});
      check((tb_gemm_bf16_path)p, (gemm_case){29, d, 13, 1, 0, mb, ma, NULL, false, NULL, true});
      check((tb_gemm_bf16_path)p, (gemm_case){15, 33, d, 1, 0, ma, mb, NULL, false, NULL, true});
    }
}

static void driver_operand_kinds_alpha_beta(void **state) {
  (void)state;
  FOR_EACH_PATH(p)
    for (int ma = 0; ma < N_MODES; ma++)
      for (int mb = 0; mb < N_MODES; mb++) {
        check((tb_gemm_bf16_path)p, (gemm_case){17, 45, 23, 1, 0, ma, mb, NULL, false, NULL, true});
        check((tb_gemm_bf16_path)p, (gemm_case){33, 19, 530, 0.5f, 2.0f, ma, mb, NULL, false, NULL, true});
        check((tb_gemm_bf16_path)p, (gemm_case){5, 7, 3, -1.25f, 1.0f, ma, mb, NULL, false, NULL, true});
      }
  /* alpha 0 and k 0 leave beta * C (beta 0: zeros even over NaN) */
  float c[4] = {NAN, NAN, NAN, NAN}, a[2] = {1, 2}, b[2] = {3, 4};
  tb_gemm_bf16_operand oa = {.data = a, .ld = 1}, ob = {.data = b, .ld = 2};
  assert_true(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 2, 2, 1, 1, &oa, &ob, 0, c, 2, NULL, NULL));
  assert_true(c[0] == 3 && c[1] == 4 && c[2] == 6 && c[3] == 8);
  assert_true(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 2, 2, 1, 0, &oa, &ob, 0.5f, c, 2, NULL, NULL));
  assert_true(c[0] == 1.5f && c[3] == 4);
  assert_true(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 2, 2, 0, 1, &oa, &ob, 0, c, 2, NULL, NULL));
  assert_true(c[0] == 0 && c[3] == 0);
  /* the inputs are rounded: 1 + 2^-9 is a quarter of bf16's step at 1 and rounds to 1; 1 + 2^-7 is exact */
  float x = 1.0f + 1.0f / 512, y = 1.0f + 1.0f / 128, one = 1;
  tb_gemm_bf16_operand ox = {.data = &x, .ld = 1}, oy = {.data = &y, .ld = 1}, o1 = {.data = &one, .ld = 1};
  FOR_EACH_PATH(p) {
    assert_true(tb_gemm_bf16_run((tb_gemm_bf16_path)p, 1, 1, 1, 1, &ox, &o1, 0, c, 1, NULL, NULL));
    assert_true(c[0] == 1.0f);
    assert_true(tb_gemm_bf16_run((tb_gemm_bf16_path)p, 1, 1, 1, 1, &oy, &oy, 0, c, 1, NULL, NULL));
    assert_true(c[0] == y * y);
  }
}

/* Past every blocking size (KC 512, MC 168, NC 1024, the 4032-row slab), serial and on 2 threads (where a
 * small product is cut into narrower tasks): every element is summed by the same micro-kernel calls in the
 * same order whatever the tasks, so the results are bit-identical. */
static void driver_large_blocked_and_threaded(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  static const int64_t shapes[][3] = {{200, 1030, 517}, {4100, 20, 10}, {20, 2100, 40}, {60, 40, 300}};
  static const int modes[][2] = {{PACKED, PACK_FN}, {TRANSPOSED, PACKED}, {PACK_FN, TRANSPOSED}, {PLAIN, PLAIN}};
  FOR_EACH_PATH(p)
    for (size_t s = 0; s < 4; s++) {
      gemm_case g = {shapes[s][0], shapes[s][1], shapes[s][2], 1, 0, PLAIN, PLAIN, NULL, false, NULL, true};
      float *checked = check_case((tb_gemm_bf16_path)p, &g);
      g.check = false; /* every operand kind packs the same bits, so every run gives the checked run's bits */
      for (size_t md = 0; md < 4; md++) {
        g.mode_a = modes[md][0];
        g.mode_b = modes[md][1];
        g.pool = md % 2 ? NULL : pool;
        float *c = check_case((tb_gemm_bf16_path)p, &g);
        if (memcmp(c, checked, (size_t)(g.m * g.n) * sizeof(float)))
          fail_msg("%s path %lldx%lldx%lld: A %s, B %s on %d threads differs from plain serial", tb_gemm_bf16_path_name((tb_gemm_bf16_path)p),
                   (long long)g.m, (long long)g.n, (long long)g.k, mode_names[g.mode_a], mode_names[g.mode_b], md % 2 ? 1 : 2);
        free(c);
      }
      free(checked);
    }
  tb_pool_destroy(pool);
}

/* m x n x 601 with B plain (the tiled driver; checked against the reference when check_tiled), then with
 * B packed on 1, 2 and 3 threads (pools[t]), A in a kind that turns with `turn` and t: bit-identical to
 * the tiled result (the run on check_thread threads - 1 also checked against the reference; -1: none). */
static void packed_b_matches_tiled(tb_gemm_bf16_path p, int64_t m, int64_t n, size_t turn, bool check_tiled,
                                   int check_thread, tb_pool *const pools[3]) {
  static const int a_modes[] = {PLAIN, TRANSPOSED, PACK_FN};
  gemm_case g = {m, n, 601, 1, 0, PLAIN, PLAIN, NULL, false, NULL, check_tiled};
  float *tiled = check_case(p, &g);
  g.mode_b = PACKED;
  for (int t = 0; t < 3; t++) {
    g.mode_a = a_modes[(turn + (size_t)t) % 3];
    g.pool = pools[t];
    g.check = t == check_thread;
    float *c = check_case(p, &g);
    if (memcmp(c, tiled, (size_t)(g.m * g.n) * sizeof(float)))
      fail_msg("%s path %lldx%lldx601: A %s, B packed on %d threads differs from the tiled driver", tb_gemm_bf16_path_name(p),
               (long long)g.m, (long long)g.n, mode_names[g.mode_a], t + 1);
    free(c);
  }
  free(tiled);
}

/* B packed and at most 336 rows: a band of columns per thread (tiles of nearly equal height; A packed per
 * depth block on one thread, all at once on more) when every band gets at least 8 slivers, else the tiled
 * driver. Row counts on both sides of the rules and around whole tiles, 70 columns (one thread: bands;
 * 2 and 3: tiled) and 800 (bands on 1, 2 and 3 threads; 25 slivers of 32, uneven bands), A in every
 * unpacked kind, an odd depth of two blocks: checked against the reference, and bit-identical to the tiled
 * driver with B plain. */
static void driver_column_bands_match_tiled(void **state) {
  (void)state;
  tb_pool *pools[3] = {NULL, NULL, NULL};
  TB_ASSERT_OK(tb_pool_create(2, &pools[1]));
  TB_ASSERT_OK(tb_pool_create(3, &pools[2]));
  static const int64_t rows[] = {1, 2, 13, 14, 15, 29, 41, 42, 85, 126, 128, 336, 337};
  FOR_EACH_PATH(p)
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) packed_b_matches_tiled((tb_gemm_bf16_path)p, rows[r], 70, r, true, 0, pools);
  static const int64_t band_rows[] = {1, 29, 128, 336};
  FOR_EACH_PATH(p)
    for (size_t r = 0; r < sizeof band_rows / sizeof band_rows[0]; r++)
      packed_b_matches_tiled((tb_gemm_bf16_path)p, band_rows[r], 800, r, r == 0, r == 0 ? 1 : -1, pools);
  /* epilogues on both paths: bias per row and column, residual aliasing C, beta */
  float bias[128];
  fill(bias, 128, 5);
  FOR_EACH_PATH(p)
    for (int t = 0; t < 3; t++) {
      tb_gemm_epilogue ep = {.bias = bias, .bias_axis = t % 2 ? 0 : 1, .act = t == 1 ? 1 : 5};
      check((tb_gemm_bf16_path)p, (gemm_case){128, 100, 40, 0.5f, 0, TRANSPOSED, PACKED, &ep, false, pools[t], true});
      ep.bias = NULL;
      check((tb_gemm_bf16_path)p, (gemm_case){90, 33, 1030, 1, 0.75f, PLAIN, PACKED, &ep, true, pools[t], true});
      check((tb_gemm_bf16_path)p, (gemm_case){30, 800, 40, 1, 0.5f, PACK_FN, PACKED, &ep, true, pools[t], true});
    }
  tb_pool_destroy(pools[1]);
  tb_pool_destroy(pools[2]);
}

static void driver_epilogues(void **state) {
  (void)state;
  float bias_rows[70], bias_cols[70], residual[70 * 70];
  fill(bias_rows, 70, 1);
  fill(bias_cols, 70, 2);
  fill(residual, 70 * 70, 3);
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  FOR_EACH_PATH(p)
    for (int act = 0; act <= 7; act++) {
      tb_gemm_epilogue ep = {.bias = act % 2 ? bias_rows : bias_cols, .bias_axis = act % 2 ? 0 : 1, .act = act,
                             .act_alpha = act == 2 ? 0.1f : 0.2f, .act_beta = 0.5f, .act_min = -0.5f, .act_max = 0.75f};
      check((tb_gemm_bf16_path)p, (gemm_case){45, 70, 50, 0.25f, 0, PLAIN, PACKED, &ep, false, NULL, true});
      ep.bias = NULL;
      ep.residual = residual;
      ep.ld_residual = 70;
      check((tb_gemm_bf16_path)p, (gemm_case){70, 41, 33, 0.25f, 1, PACK_FN, PLAIN, &ep, false, pool, true});
      ep.residual = NULL;
      check((tb_gemm_bf16_path)p, (gemm_case){70, 41, 600, 0.25f, -1, TRANSPOSED, PLAIN, &ep, true, pool, true});
    }
  tb_pool_destroy(pool);
}

static void driver_rejects_mismatched_packed(void **state) {
  (void)state;
  float x[6 * 5];
  fill(x, 30, 4);
  tb_gemm_bf16_operand src = {.data = x, .ld = 5};
  tb_gemm_bf16_packed *pa = tb_gemm_bf16_pack_a(TB_GEMM_BF16_PORTABLE, &src, 6, 5);
  tb_gemm_bf16_packed *pb = tb_gemm_bf16_pack_b(TB_GEMM_BF16_PORTABLE, &src, 6, 5);
  assert_non_null(pa);
  assert_non_null(pb);
  /* A: 6 rows in 2 slivers of 4 x 3 pairs x 2; B: 5 columns in one sliver of 16, 3 pairs x 2 */
  assert_int_equal(tb_gemm_bf16_packed_bytes(pa), 2 * 4 * 3 * 2 * 2);
  assert_int_equal(tb_gemm_bf16_packed_bytes(pb), 16 * 3 * 2 * 2);
  tb_gemm_bf16_operand oa = {.packed = pa}, ob = {.packed = pb}, plain_b = {.data = x, .ld = 6};
  float c[36];
  assert_true(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 6, 5, 5, 1, &oa, &ob, 0, c, 5, NULL, NULL) == false); /* k 6 != 5 */
  assert_true(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 6, 6, 5, 1, &oa, &plain_b, 0, c, 6, NULL, NULL)); /* fits */
  assert_false(tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, 6, 6, 5, 1, &ob, &plain_b, 0, c, 6, NULL, NULL)); /* B as A */
  assert_false(tb_gemm_bf16_run(TB_GEMM_BF16_AMX_EMULATED, 6, 6, 5, 1, &oa, &plain_b, 0, c, 6, NULL, NULL));
  assert_null(tb_gemm_bf16_pack_a(TB_GEMM_BF16_PORTABLE, &oa, 6, 5)); /* already packed */
  assert_null(tb_gemm_bf16_pack_b(TB_GEMM_BF16_PORTABLE, &(tb_gemm_bf16_operand){0}, 6, 5)); /* nothing */
  assert_int_equal(tb_gemm_bf16_packed_bytes(NULL), 0);
  tb_gemm_bf16_packed_free(pa);
  tb_gemm_bf16_packed_free(pb);
  tb_gemm_bf16_packed_free(NULL);
}

static void path_choice_follows_features(void **state) {
  (void)state;
  uint64_t need = TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16);
  assert_int_equal(tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16), need);
  assert_int_equal(tb_gemm_bf16_path_features(TB_GEMM_BF16_PORTABLE), 0);
  assert_int_equal(tb_gemm_bf16_path_for(need & ~TB_FEATURE_BIT(TB_FEATURE_AVX512BF16)), TB_GEMM_BF16_PORTABLE);
  assert_int_equal(tb_gemm_bf16_path_for(0), TB_GEMM_BF16_PORTABLE);
#if defined(__x86_64__)
  assert_int_equal(tb_gemm_bf16_path_for(need | TB_FEATURE_BIT(TB_FEATURE_AVX2)), TB_GEMM_BF16_AVX512BF16);
#endif
  assert_string_equal(tb_gemm_bf16_path_name(TB_GEMM_BF16_PORTABLE), "portable");
  assert_string_equal(tb_gemm_bf16_path_name(TB_GEMM_BF16_AVX512BF16), "avx512bf16");
}

/* ---- the level-3 kernel entries ---- */

extern const tb_kernel tb_kernel_matmul_bf16_avx512bf16, tb_kernel_matmul_bf16_portable, tb_kernel_gemm_bf16_avx512bf16,
    tb_kernel_gemm_bf16_portable, tb_kernel_fused_matmul_bf16_avx512bf16, tb_kernel_fused_matmul_bf16_portable,
    tb_kernel_fused_gemm_bf16_avx512bf16, tb_kernel_fused_gemm_bf16_portable;
extern const tb_kernel tb_kernel_matmul_bf16_amx, tb_kernel_gemm_bf16_amx, tb_kernel_fused_matmul_bf16_amx,
    tb_kernel_fused_gemm_bf16_amx, tb_kernel_matmul_bf16_amx_emulated, tb_kernel_gemm_bf16_amx_emulated,
    tb_kernel_fused_matmul_bf16_amx_emulated, tb_kernel_fused_gemm_bf16_amx_emulated;
extern const tb_kernel tb_kernel_matmul, tb_kernel_gemm, tb_kernel_fused_matmul, tb_kernel_fused_gemm;

#define MODELS TB_TEST_FIXTURES "/../../models/"

typedef struct op_entries {
  const char *domain, *op;
  const tb_kernel *path[TB_GEMM_BF16_PATH_COUNT]; /* indexed by tb_gemm_bf16_path */
  const tb_kernel *ref;
} op_entries;

static const op_entries matmul_entries = {"", "MatMul", {&tb_kernel_matmul_bf16_portable, &tb_kernel_matmul_bf16_avx512bf16, &tb_kernel_matmul_bf16_amx, &tb_kernel_matmul_bf16_amx_emulated}, &tb_kernel_matmul};
static const op_entries gemm_entries = {"", "Gemm", {&tb_kernel_gemm_bf16_portable, &tb_kernel_gemm_bf16_avx512bf16, &tb_kernel_gemm_bf16_amx, &tb_kernel_gemm_bf16_amx_emulated}, &tb_kernel_gemm};
static const op_entries fused_matmul_entries = {
    "tb", "FusedMatMul", {&tb_kernel_fused_matmul_bf16_portable, &tb_kernel_fused_matmul_bf16_avx512bf16, &tb_kernel_fused_matmul_bf16_amx,
                             &tb_kernel_fused_matmul_bf16_amx_emulated}, &tb_kernel_fused_matmul};
static const op_entries fused_gemm_entries = {
    "tb", "FusedGemm", {&tb_kernel_fused_gemm_bf16_portable, &tb_kernel_fused_gemm_bf16_avx512bf16, &tb_kernel_fused_gemm_bf16_amx,
                           &tb_kernel_fused_gemm_bf16_amx_emulated}, &tb_kernel_fused_gemm};

static tb_tolerance bf16_tolerance(void) {
  tb_tolerance t = {.size = sizeof t};
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CPU, TB_PRECISION_BF16, TB_LEVEL_O3, &t));
  return t;
}

/* A one-node graph: the op in its domain (ONNX opset 13, tb opset 1) with n_in inputs in0.. and out0. */
static void node_setup(toh *t, const op_entries *e, size_t n_in, const tb_attr *attrs, size_t n_attrs) {
  if (!*e->domain) {
    toh_setup(t, e->op, 13, n_in, 0, 1, attrs, n_attrs);
    return;
  }
  toh_begin(t, NULL);
  int ins[3], out = tb_graph_value(t->graph, "out0");
  for (size_t i = 0; i < n_in; i++) {
    char name[32];
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", e->op, e->domain, ins, n_in, &out, 1, attrs, n_attrs);
  assert_true(t->node >= 0);
  toh_node(t)->opset = 1;
  toh_node(t)->def = tb_op_find(e->domain, e->op, 1);
  assert_non_null(toh_node(t)->def);
  t->n_in = n_in;
  t->n_out = 1;
}

/* Values in [-0.5, 0.5]. The table's bf16 atol (1e-2) does not grow with k: with values in [-1, 1] the
 * rounding error of a 35-term dot product reaches 1.2e-2 (measured here, about 4 standard deviations of
 * sqrt(k) * 2^-9 / 3), so the kernels are checked on inputs of half that range, where it is 9 deviations. */
static tb_tensor *random_tensor(toh *t, size_t ndim, const int64_t *shape, uint64_t seed) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  fill(x, n, seed);
  for (int64_t i = 0; i < n; i++) x[i] *= 0.5f;
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, ndim, shape, x);
  free(x);
  return r;
}

/* Run kernel k on the node with these inputs (and prepare()'s state); the status, the output in *out. */
static tb_status run_entry(toh *t, const tb_kernel *k, tb_tensor **in, size_t n_in, void *kstate, tb_pool *pool,
                           tb_tensor **out) {
  *out = NULL;
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = n_in, .inputs = in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = pool ? 2 : 1, .pool = pool, .state = kstate};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  return k->run(&ctx);
}

static tb_tensor *run_ok(toh *t, const tb_kernel *k, tb_tensor **in, size_t n_in, void *kstate, tb_pool *pool) {
  tb_tensor *out = NULL;
  TB_ASSERT_OK(run_entry(t, k, in, n_in, kstate, pool, &out));
  assert_non_null(out);
  return out;
}

/* |got - ref| <= atol + rtol |ref| elementwise, same shape. */
static void assert_within(const tb_tensor *got, const tb_tensor *ref, double atol, double rtol, const char *what) {
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(ref));
  for (size_t i = 0; i < tb_tensor_ndim(ref); i++) assert_int_equal(tb_tensor_shape(got)[i], tb_tensor_shape(ref)[i]);
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= atol + rtol * fabs((double)r[i])))
      fail_msg("%s: element %lld is %.9g, reference %.9g (atol %g rtol %g)", what, (long long)i, g[i], r[i], atol, rtol);
}

/* Every path against the fp32 reference (the bf16 tolerance) and against the portable bf16 path (only the
 * summation order differs: 2 (k + 4) 2^-24 k for inputs in [-1, 1], plus an ulp-scale term for the epilogue).
 * Where AMX is not ready, the AMX entry (chosen on a CPU whose cpuid has AMX even when Linux refuses the
 * tiles) runs the path tb_gemm_bf16_runnable gives, bit for bit. */
static void check_entries(toh *t, const op_entries *e, tb_tensor **in, size_t n_in, int64_t k, const char *what) {
  tb_tolerance tol = bf16_tolerance();
  tb_tensor *ref = run_ok(t, e->ref, in, n_in, NULL, NULL), *portable = NULL;
  if (!tb_gemm_bf16_amx_ready()) {
    tb_tensor *amx = run_ok(t, e->path[TB_GEMM_BF16_AMX], in, n_in, NULL, NULL);
    tb_tensor *fallback = run_ok(t, e->path[tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX)], in, n_in, NULL, NULL);
    assert_memory_equal(tb_tensor_host_data(amx), tb_tensor_host_data(fallback), tb_tensor_nbytes(fallback));
    tb_tensor_destroy(amx);
    tb_tensor_destroy(fallback);
  }
  FOR_EACH_PATH(p) {
    tb_tensor *got = run_ok(t, e->path[p], in, n_in, NULL, NULL);
    char msg[160];
    snprintf(msg, sizeof msg, "%s %s on %s vs the fp32 reference", e->op, what, tb_gemm_bf16_path_name((tb_gemm_bf16_path)p));
    assert_within(got, ref, tol.atol, tol.rtol, msg);
    if (p == 0) {
      portable = got;
      continue;
    }
    snprintf(msg, sizeof msg, "%s %s on %s vs the portable bf16 path", e->op, what, tb_gemm_bf16_path_name((tb_gemm_bf16_path)p));
    assert_within(got, portable, 2.0 * (double)(k + 4) * FLT_EPSILON / 2 * (double)k * 2 + 1e-6, 1e-6, msg);
    tb_tensor_destroy(got);
  }
  tb_tensor_destroy(portable);
  tb_tensor_destroy(ref);
}

typedef struct mm_case {
  size_t na, nb;
  int64_t a[4], b[4];
} mm_case;

static const mm_case mm_cases[] = {
    {4, 3, {2, 1, 5, 7}, {3, 7, 9}}, /* batch broadcast both ways */
    {2, 3, {6, 35}, {4, 35, 17}},     /* 2-D A against a batch of B */
    {3, 2, {3, 20, 64}, {64, 45}},    /* a batch of A against one B: one product of 60 rows */
    {1, 2, {19}, {19, 40}},           /* 1-D A */
    {3, 1, {2, 33, 8}, {8}},          /* 1-D B */
    {1, 1, {5}, {5}},                 /* dot product: scalar out */
    {3, 3, {2, 0, 4}, {2, 4, 3}},     /* empty */
    {2, 2, {3, 0}, {0, 4}},           /* k = 0: zeros */
};

static void matmul_entries_match_reference(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof mm_cases / sizeof mm_cases[0]; c++)
    for (int fused = 0; fused < 2; fused++) {
      toh t;
      tb_attr act[] = {TOH_STR("activation", c % 2 ? "LeakyRelu" : "Sigmoid"), TOH_FLOAT("activation_alpha", 0.2f)};
      node_setup(&t, fused ? &fused_matmul_entries : &matmul_entries, 2, fused ? act : NULL, fused ? 2 : 0);
      tb_tensor *in[2] = {random_tensor(&t, mm_cases[c].na, mm_cases[c].a, c), random_tensor(&t, mm_cases[c].nb, mm_cases[c].b, c + 9)};
      char what[48];
      snprintf(what, sizeof what, "case %zu", c);
      check_entries(&t, fused ? &fused_matmul_entries : &matmul_entries, in, 2, mm_cases[c].a[mm_cases[c].na - 1], what);
      toh_clear(in, 2);
      toh_teardown(&t);
    }
}

static void gemm_entries_match_reference(void **state) {
  (void)state;
  static const int64_t c_shapes[][3] = {{0}, {1, 21}, {2, 1, 21}, {2, 13, 1}, {2, 13, 21}, {2, 1, 1}};
  static const char *const acts[] = {"Relu", "Tanh", "HardSigmoid", "HardSwish", "Clip", "Sigmoid"};
  for (int fused = 0; fused < 2; fused++)
    for (int tr = 0; tr < 4; tr++)
      for (size_t cs = 0; cs < 6; cs++) {
        bool ta = tr & 1, tb = tr & 2;
        const op_entries *e = fused ? &fused_gemm_entries : &gemm_entries;
        tb_attr attrs[] = {TOH_INT("transA", ta), TOH_INT("transB", tb), TOH_FLOAT("alpha", 0.75f), TOH_FLOAT("beta", -1.5f),
                           TOH_STR("activation", acts[cs]), TOH_FLOAT("activation_min", -0.5f), TOH_FLOAT("activation_max", 1.0f)};
        toh t;
        node_setup(&t, e, cs ? 3 : 2, attrs, fused ? 7 : 4);
        const int64_t as[2] = {ta ? 40 : 13, ta ? 13 : 40}, bs[2] = {tb ? 21 : 40, tb ? 40 : 21};
        tb_tensor *in[3] = {random_tensor(&t, 2, as, 1), random_tensor(&t, 2, bs, 2),
                            cs ? random_tensor(&t, (size_t)c_shapes[cs][0], c_shapes[cs] + 1, 3) : NULL};
        char what[64];
        snprintf(what, sizeof what, "transA=%d transB=%d C case %zu", ta, tb, cs);
        check_entries(&t, e, in, cs ? 3 : 2, 40, what);
        toh_clear(in, 3);
        toh_teardown(&t);
      }
}

/* prepare() packs a constant B once: the run with that state gives the same bits as packing on the fly, on
 * 1 and 2 threads; a B that is not constant gets no state. */
static void prepare_packs_constant_weights(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  for (int which = 0; which < 3; which++) {
    const op_entries *e = which == 0 ? &matmul_entries : which == 1 ? &gemm_entries : &fused_gemm_entries;
    tb_attr attrs[] = {TOH_INT("transB", 1), TOH_STR("activation", "Relu")};
    toh t;
    node_setup(&t, e, 2, which ? attrs : NULL, (size_t)which);
    const int64_t as[3] = {3, 70, 300}, bs_mm[2] = {300, 90}, bs_gemm[2] = {90, 300};
    tb_tensor *in[2] = {which ? random_tensor(&t, 2, as + 1, 1) : random_tensor(&t, 3, as, 1),
                        random_tensor(&t, 2, which ? bs_gemm : bs_mm, 2)};
    FOR_EACH_PATH(p) {
      const tb_kernel *k = e->path[p];
      assert_non_null(k->prepare);
      assert_string_equal(k->precision, "bf16");
      tb_tensor *consts[2] = {NULL, in[1]};
      tb_kernel_ctx pctx = {.graph = t.graph, .node = toh_node(&t), .n_inputs = 2, .inputs = consts, .backend = t.cpu};
      (void)tbt_kernel_bind(&pctx, t.graph, toh_node(&t), NULL);
      void *kstate = (void *)1;
      TB_ASSERT_OK(k->prepare(&pctx, &kstate)); /* B is not marked constant in the graph yet */
      assert_null(kstate);
      tb_ir_tensor weights = {.name = "w", .dtype = TB_DTYPE_F32, .ndim = 2};
      t.graph->values[toh_node(&t)->inputs[1]].constant = &weights;
      (void)tbt_kernel_bind(&pctx, t.graph, toh_node(&t), NULL); /* the executor's constant_inputs bits follow the graph */
      TB_ASSERT_OK(k->prepare(&pctx, &kstate));
      assert_non_null(kstate);
      tb_tensor *fly = run_ok(&t, k, in, 2, NULL, NULL), *packed = run_ok(&t, k, in, 2, kstate, NULL);
      tb_tensor *threaded = run_ok(&t, k, in, 2, kstate, pool);
      assert_memory_equal(tb_tensor_host_data(fly), tb_tensor_host_data(packed), tb_tensor_nbytes(fly));
      assert_memory_equal(tb_tensor_host_data(fly), tb_tensor_host_data(threaded), tb_tensor_nbytes(fly));
      tb_tensor_destroy(fly);
      tb_tensor_destroy(packed);
      tb_tensor_destroy(threaded);
      k->release(kstate);
      t.graph->values[toh_node(&t)->inputs[1]].constant = NULL;
    }
    toh_clear(in, 2);
    toh_teardown(&t);
  }
  tb_pool_destroy(pool);
}

static void entries_reject_bad_nodes(void **state) {
  (void)state;
  toh t;
  node_setup(&t, &gemm_entries, 2, NULL, 0);
  const int64_t a3[3] = {2, 3, 4}, a2[2] = {3, 4}, b2[2] = {5, 6};
  tb_tensor *in[2] = {random_tensor(&t, 3, a3, 1), random_tensor(&t, 2, b2, 2)}, *out = NULL;
  assert_int_equal(run_entry(&t, gemm_entries.path[0], in, 2, NULL, NULL, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "must be 2-D");
  tb_tensor_destroy(in[0]);
  in[0] = random_tensor(&t, 2, a2, 1);
  assert_int_equal(run_entry(&t, gemm_entries.path[0], in, 2, NULL, NULL, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "inner dimensions of A and B differ: 4 vs 5");
  tb_tensor_destroy(in[0]);
  double d[12] = {0};
  in[0] = toh_host_tensor(t.cpu, TB_DTYPE_F64, 2, a2, d);
  assert_int_equal(run_entry(&t, gemm_entries.path[0], in, 2, NULL, NULL, &out), TB_ERR_INTERNAL);
  TB_ASSERT_CONTAINS(tb_last_error(), "float32");
  toh_clear(in, 2);
  toh_teardown(&t);
  tb_attr bad[] = {TOH_STR("activation", "Swish")};
  node_setup(&t, &fused_matmul_entries, 2, bad, 1); /* refused when parsed: no kernel sees it */
  assert_int_equal(tb_node_parse_params(t.graph, toh_node(&t)), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute activation is 'Swish'; expected Relu");
  toh_teardown(&t);
}

static const tb_kernel *pick(const op_entries *e, tb_dtype dtype, int level, uint64_t features) {
  toh t;
  node_setup(&t, e, 2, NULL, 0);
  const int64_t d[2] = {4, 4};
  tb_value_type ty = toh_type(dtype, 2, d);
  const tb_value_type *in[2] = {&ty, &ty};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features);
  toh_teardown(&t);
  return k;
}

static uint64_t features_with_mask(const char *mask) {
  setenv("TB_CPU_FEATURES", mask, 1);
  uint64_t f = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  return f;
}

static void kernel_choice_follows_level_and_mask(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  const op_entries *all[] = {&matmul_entries, &gemm_entries, &fused_matmul_entries, &fused_gemm_entries};
  for (int i = 0; i < 4; i++) {
    const op_entries *e = all[i];
    if (runs_here(TB_GEMM_BF16_AVX512BF16)) assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, hw), e->path[TB_GEMM_BF16_AVX512BF16]);
    /* AMX in the features: its entries come first; the rest of the AMX group masked: AVX512-BF16 again */
    uint64_t amx = TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16);
    uint64_t avx512bf16 = tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16);
    assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, avx512bf16 | amx), e->path[TB_GEMM_BF16_AMX]);
    assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, avx512bf16 | TB_FEATURE_BIT(TB_FEATURE_AMX_TILE)), e->path[TB_GEMM_BF16_AVX512BF16]);
    assert_int_equal(e->path[TB_GEMM_BF16_AMX]->cpu_features, tb_gemm_bf16_path_features(TB_GEMM_BF16_AMX));
    assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, features_with_mask("-avx512bf16")), e->path[TB_GEMM_BF16_PORTABLE]);
    assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, features_with_mask("-avx512f")), e->path[TB_GEMM_BF16_PORTABLE]);
    assert_ptr_equal(pick(e, TB_DTYPE_F32, 3, 0), e->path[TB_GEMM_BF16_PORTABLE]);
    const tb_kernel *o2 = pick(e, TB_DTYPE_F32, 2, hw);
    assert_non_null(o2);
    assert_null(o2->precision); /* level 2 keeps fp32 */
    assert_ptr_equal(pick(e, TB_DTYPE_F64, 3, hw), e->ref); /* float32 only */
    assert_string_equal(e->path[0]->precision, "bf16");
    assert_int_equal(e->path[0]->level, 3);
    assert_int_equal(e->path[0]->cpu_features, 0);
    assert_int_equal(e->path[1]->cpu_features, tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16));
  }
}

/* The bundled encoder (MatMul-heavy) at O3 against O0 within the bf16 tolerance; the result names the nodes
 * that ran in bf16. Under TB_CPU_FEATURES=-avx512bf16 the CPU has no bf16 instructions, so O3 keeps fp32 (the
 * portable bf16 kernels are only reachable through tb_cpu_kernel_find, tested above) and says why. */
static void encoder_o3_matches_o0_within_bf16_tolerance(void **state) {
  (void)state;
  tb_tolerance tol = bf16_tolerance();
  tbt_tensor_env();
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &m));
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_npy_load(MODELS "encoder_small/inputs/x.npy", b, &x));
  const char *masks[] = {"", "-avx512bf16"};
  const char *names[] = {"x"};
  for (int mi = 0; mi < 2; mi++) {
    bool bf16 = mi == 0 && runs_here(TB_GEMM_BF16_AVX512BF16);
    tb_tensor *y[2] = {NULL, NULL};
    for (int l = 0; l < 2; l++) {
      setenv("TB_CPU_FEATURES", masks[mi], 1);
      tb_prepare_options o = {.size = sizeof o, .level = l ? TB_LEVEL_O3 : TB_LEVEL_O0, .precision = TB_PRECISION_AUTO};
      tb_prepared *p = NULL;
      const tb_prepare_result *r = NULL;
      TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
      unsetenv("TB_CPU_FEATURES");
      if (l && bf16) {
        assert_true(r->reduced_precision_nodes > 0);
        TB_ASSERT_CONTAINS(r->node_precisions[0], ": bf16");
      } else if (l) {
        assert_int_equal(r->reduced_precision_nodes, 0);
        bool said = false;
        for (size_t w = 0; w < r->warning_count; w++) said = said || strstr(r->warnings[w], "no bf16 instructions");
        assert_true(said);
      }
      TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x, 1, NULL, &y[l]));
      tb_prepared_destroy(p);
    }
    char what[64];
    snprintf(what, sizeof what, "encoder O3 (mask '%s') vs O0", masks[mi]);
    assert_within(y[1], y[0], tol.atol, tol.rtol, what);
    tb_tensor_destroy(y[0]);
    tb_tensor_destroy(y[1]);
  }
  tb_tensor_destroy(x);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

int main(void) {
  /* O3 runs bf16 wherever a kernel exists (no timing trial, whose choice depends on the machine): these tests
   * check the bf16 kernels' results through tb_model_prepare */
  setenv("TB_BF16_TRIAL", "off", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rounding_matches_tb_convert),
      cmocka_unit_test(packed_layout_is_pair_interleaved),
      cmocka_unit_test(packing_paths_agree),
      cmocka_unit_test(amx_packing_is_line_and_pair_layout),
      cmocka_unit_test(amx_model_follows_the_reference),
      cmocka_unit_test(amx_readiness_and_self_check),
      cmocka_unit_test(driver_every_dim_and_operand_kind),
      cmocka_unit_test(driver_operand_kinds_alpha_beta),
      cmocka_unit_test(driver_large_blocked_and_threaded),
      cmocka_unit_test(driver_column_bands_match_tiled),
      cmocka_unit_test(driver_epilogues),
      cmocka_unit_test(driver_rejects_mismatched_packed),
      cmocka_unit_test(path_choice_follows_features),
      cmocka_unit_test(matmul_entries_match_reference),
      cmocka_unit_test(gemm_entries_match_reference),
      cmocka_unit_test(prepare_packs_constant_weights),
      cmocka_unit_test(entries_reject_bad_nodes),
      cmocka_unit_test(kernel_choice_follows_level_and_mask),
      cmocka_unit_test(encoder_o3_matches_o0_within_bf16_tolerance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
