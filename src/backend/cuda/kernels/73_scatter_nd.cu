// ScatterND with a reduction, parallel over the index rows, on 70_data.cu's calling convention and 71_index_more.cu's
// tb_dm_reduce_into (the CPU's arithmetic per dtype and reduction). The data's first k dims are addressed by the
// rows (dims[0..k), strides st[3][0..k)); each row addresses one target, a slice of p[1] elements (p: k, slice,
// rows, targets = the data's elements / slice). Three launches on the node's stream, no host round-trip:
//   clear: the marks (2 x targets uint32, a temporary) zeroed;
//   mark:  one thread per row: marks[t] counts the valid rows that address target t, marks[targets + t] holds
//          rows - the first of them (atomicMax), and a bad index sets the index flag c, as the ordered kernel does;
//   apply: one thread per (row, slice position): a target addressed once is updated by its row directly; a repeated
//          one only by the thread of its first row, which applies every row addressing it in the rows' order.
// So every element gets its updates in the CPU's order, bit for bit for every dtype and reduction (float add and
// mul depend on the order), in parallel over the targets; a target addressed r times costs its thread r updates
// and a walk of the rows after its first (the ordered kernel walks every row for every slice position).

// The target and element offset of row m (false when an index is out of range: the mark kernel flagged it).
__device__ inline bool tb_dm_nd_row(const void *idx, int idt, const tb_dm &d, tb_index m, tb_index *off) {
  tb_index k = d.p[0];
  *off = 0;
  for (tb_index j = 0; j < k; j++) {
    tb_index cc = tb_dm_index(idx, idt, m * k + j, d.dims[j]);
    if (cc < 0 || cc >= d.dims[j]) return false;
    *off += cc * d.st[3][j];
  }
  return true;
}

extern "C" __global__ void tb_cu_dm_scatter_nd_clear(TB_DM_PARAMS) {
  TB_DM_USE();
  unsigned *marks = (unsigned *)y;
  TB_GRID_LOOP(i, n) marks[i] = 0u;
}

// b: the indices, c: the index flag, y: the marks; n = rows.
extern "C" __global__ void tb_cu_dm_scatter_nd_mark(TB_DM_PARAMS) {
  TB_DM_USE();
  unsigned *marks = (unsigned *)y;
  int idt = (d.mode >> 16) & 0xff;
  tb_index k = d.p[0], slice = d.p[1], rows = d.p[2], targets = d.p[3];
  TB_GRID_LOOP(m, n) {
    tb_index off = 0;
    bool bad = false;
    for (tb_index j = 0; j < k; j++) {
      tb_index cc = tb_dm_index_checked(b, idt, m * k + j, d.dims[j], c);
      bad = bad || cc < 0;
      off += cc * d.st[3][j];
    }
    if (bad) continue;
    tb_index t = off / slice;
    atomicAdd(&marks[t], 1u);
    atomicMax(&marks[targets + t], (unsigned)(rows - m));
  }
}

// a: the updates [rows, slice], b: the indices, c: the marks, y: the data; n = rows x slice.
extern "C" __global__ void tb_cu_dm_scatter_nd_apply(TB_DM_PARAMS) {
  TB_DM_USE();
  const unsigned *marks = (const unsigned *)c;
  int idt = (d.mode >> 16) & 0xff;
  tb_index slice = d.p[1], rows = d.p[2], targets = d.p[3];
  TB_GRID_LOOP(i, n) {
    tb_index m = i / slice, s = i % slice, off = 0;
    if (!tb_dm_nd_row(b, idt, d, m, &off)) continue;
    tb_index t = off / slice;
    unsigned count = marks[t];
    if (count == 1u) {
      tb_dm_reduce_into(y, off + s, a, i, d.mode);
      continue;
    }
    if (rows - (tb_index)marks[targets + t] != m) continue; // not the target's first row
    unsigned done = 0;
    for (tb_index r = m; r < rows && done < count; r++) {
      tb_index other = 0;
      if (!tb_dm_nd_row(b, idt, d, r, &other) || other != off) continue;
      tb_dm_reduce_into(y, off + s, a, r * slice + s, d.mode);
      done++;
    }
  }
}
