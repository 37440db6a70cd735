/* Data movement on 2- and 4-byte elements (float16, float32): a strided copy (Transpose, Slice, Concat,
 * Split, Expand: the host describes the source and destination strides of each output position), Pad and
 * Gather along one axis with int64 or int32 indices (range-checked by the host, negatives wrapped here). */

#define TB_COPY(T, NAME)                                                                                     \
  kernel void NAME(global const T *x, int xo, global T *y, int yo, int n, int nd, int8 shape, int8 sx, int8 sy) { \
    int i = get_global_id(0);                                                                              \
    if (i >= n) return;                                                                                    \
    int s[8], tx[8], ty[8];                                                                                \
    vstore8(shape, 0, s);                                                                                  \
    vstore8(sx, 0, tx);                                                                                    \
    vstore8(sy, 0, ty);                                                                                    \
    y[yo + tb_offset(i, nd, s, ty)] = x[xo + tb_offset(i, nd, s, tx)];                                     \
  }
TB_COPY(uint, tb_copy_u32)
TB_COPY(ushort, tb_copy_u16)

#define TB_GATHER(T, I, NAME)                                                                                \
  kernel void NAME(global const T *x, int xo, global const I *idx, int io, global T *y, int yo, int n, int axis_len, \
                   int n_idx, int inner) {                                                                 \
    int i = get_global_id(0);                                                                              \
    if (i >= n) return;                                                                                    \
    int in = i % inner, t = i / inner;                                                                     \
    int j = t % n_idx, o = t / n_idx;                                                                      \
    long k = (long)idx[io + j];                                                                            \
    if (k < 0) k += axis_len;                                                                              \
    y[yo + i] = x[xo + (o * axis_len + (int)k) * inner + in];                                              \
  }
TB_GATHER(uint, long, tb_gather_u32_i64)
TB_GATHER(uint, int, tb_gather_u32_i32)
TB_GATHER(ushort, long, tb_gather_u16_i64)
TB_GATHER(ushort, int, tb_gather_u16_i32)

/* Pad: output i reads the input at its coordinate minus the begin pad (negative pads crop), mapped back
 * inside by the mode (1 reflect, 2 edge), or is `value` (mode 0; the element's bits in the low bytes). */
#define TB_PAD(T, NAME)                                                                                      \
  kernel void NAME(global const T *x, int xo, global T *y, int yo, int n, int nd, int8 oshape, int8 ishape,     \
                   int8 begin, int mode, uint value) {                                                     \
    int i = get_global_id(0);                                                                              \
    if (i >= n) return;                                                                                    \
    int os[8], is[8], bg[8];                                                                               \
    vstore8(oshape, 0, os);                                                                                \
    vstore8(ishape, 0, is);                                                                                \
    vstore8(begin, 0, bg);                                                                                 \
    int rem = i, off = 0, stride = 1;                                                                      \
    bool use_value = false;                                                                                \
    for (int d = nd - 1; d >= 0; d--) {                                                                    \
      int c = rem % os[d], dim = is[d];                                                                    \
      rem /= os[d];                                                                                        \
      int s = c - bg[d];                                                                                   \
      if (s < 0 || s >= dim) {                                                                             \
        if (mode == 0 || dim == 0) {                                                                       \
          use_value = true;                                                                                \
          s = 0;                                                                                           \
        } else if (mode == 2 || dim == 1) {                                                                \
          s = s < 0 ? 0 : dim - 1;                                                                         \
        } else {                                                                                           \
          int period = 2 * (dim - 1);                                                                      \
          s %= period;                                                                                     \
          if (s < 0) s += period;                                                                          \
          if (s >= dim) s = period - s;                                                                    \
        }                                                                                                  \
      }                                                                                                    \
      off += s * stride;                                                                                   \
      stride *= dim;                                                                                       \
    }                                                                                                      \
    y[yo + i] = use_value ? (T)value : x[xo + off];                                                         \
  }
TB_PAD(uint, tb_pad_u32)
TB_PAD(ushort, tb_pad_u16)
