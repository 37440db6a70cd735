/* The project's own GEMM (used when CLBlast is absent or TB_CLBLAST=off): C = alpha * op(A) op(B) + beta * C,
 * row-major with leading dimensions, op = transpose when ta / tb is set. TB_TS x TB_TS tiles of A and B
 * are staged in local memory; each work-item computes one element of C. beta == 0 never reads C. */
#ifndef TB_TS
#define TB_TS 16
#endif

kernel __attribute__((reqd_work_group_size(TB_TS, TB_TS, 1)))
void tb_gemm(int M, int N, int K, global const float *A, int ao, int lda, int ta, global const float *B, int bo, int ldb,
             int tb, global float *C, int co, int ldc, float alpha, float beta) {
  local float As[TB_TS][TB_TS + 1];
  local float Bs[TB_TS][TB_TS + 1];
  int lr = get_local_id(1), lc = get_local_id(0);
  int row = get_group_id(1) * TB_TS + lr, col = get_group_id(0) * TB_TS + lc;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TB_TS) {
    int ka = k0 + lc, kb = k0 + lr;
    As[lr][lc] = (row < M && ka < K) ? (ta ? A[ao + ka * lda + row] : A[ao + row * lda + ka]) : 0.0f;
    Bs[lr][lc] = (kb < K && col < N) ? (tb ? B[bo + col * ldb + kb] : B[bo + kb * ldb + col]) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TB_TS; k++) acc += As[lr][k] * Bs[k][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    int c = co + row * ldc + col;
    C[c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
  }
}
