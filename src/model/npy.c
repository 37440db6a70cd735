/* NumPy .npy files: tb_npy_load and tb_npy_save (include/tensorbridge/model.h; the format and our
 * conventions are in docs/npy.md).
 *
 * Reading checks every field: the magic "\x93NUMPY", the version (1.0, 2.0, 3.0), the header length
 * (at most TB_NPY_MAX_HEADER bytes, within the file), the header dict (exactly 'descr', 'fortran_order'
 * and 'shape', as numpy writes them), the dtype code, the shape (at most TB_MAX_DIMS non-negative sizes
 * whose byte count fits), and that the file holds exactly the data the shape says. Big-endian data is
 * TB_ERR_UNSUPPORTED. Fortran-order arrays are reordered to row-major.
 *
 * bf16 and fp8 are not numpy dtypes. We write them as one-field structured dtypes that numpy reads
 * as they are and that name the format: [('bf16', '<u2')], [('fp8_e4m3fn', '|u1')],
 * [('fp8_e5m2', '|u1')] (a user views the field with ml_dtypes). We read those back, and '<V2' as
 * bf16 (what numpy writes for an ml_dtypes.bfloat16 array). '|V1' is refused: both fp8 formats write it,
 * so the format cannot be known. Writing is version 1.0 with the header padded to 64 bytes. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tensorbridge/model.h>
#include "core/error.h"
#include "core/regular_file.h"

#define TB_NPY_MAX_HEADER (1u << 20) /* numpy itself refuses headers over 10 KB unless told otherwise */

typedef struct npy_code {
  const char *descr;
  tb_dtype dtype;
} npy_code;

/* Codes we write, and read (with the aliases below). */
static const npy_code codes[] = {
    {"<f8", TB_DTYPE_F64}, {"<f4", TB_DTYPE_F32}, {"<f2", TB_DTYPE_F16}, {"<i8", TB_DTYPE_I64},
    {"<i4", TB_DTYPE_I32}, {"<i2", TB_DTYPE_I16}, {"|i1", TB_DTYPE_I8},  {"|u1", TB_DTYPE_U8},
    {"|b1", TB_DTYPE_BOOL},
};
static const npy_code aliases[] = {{"<V2", TB_DTYPE_BF16}, {"|V2", TB_DTYPE_BF16}};
/* Structured one-field dtypes for the formats numpy lacks: field name, field code. */
static const struct {
  const char *field;
  const char *code;
  tb_dtype dtype;
} structured[] = {{"bf16", "<u2", TB_DTYPE_BF16},
                  {"fp8_e4m3fn", "|u1", TB_DTYPE_FP8_E4M3FN},
                  {"fp8_e5m2", "|u1", TB_DTYPE_FP8_E5M2}};

/* ---- header parsing --------------------------------------------------------------------------- */

typedef struct npy_header {
  tb_dtype dtype;
  bool fortran;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
} npy_header;

/* "[2, 3]" for messages. */
static void shape_text(const npy_header *h, char *dims, size_t cap) {
  size_t u = (size_t)snprintf(dims, cap, "[");
  for (size_t i = 0; i < h->ndim && u < cap; i++)
    u += (size_t)snprintf(dims + u, cap - u, "%s%lld", i ? ", " : "", (long long)h->shape[i]);
  if (u < cap) snprintf(dims + u, cap - u, "]");
}


typedef struct parser {
  const char *p, *end, *start;
  const char *path;
} parser;

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static bool take(parser *ps, char c) {
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return false;
}

static tb_status bad(const parser *ps, const char *what) {
  return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: %s (at header byte %td)", ps->path, what,
                  ps->p - ps->start);
}

/* A Python string literal, '...' or "...", without escapes (numpy never writes any in these keys). */
static bool string_lit(parser *ps, char *out, size_t cap) {
  skip_ws(ps);
  if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"')) return false;
  char q = *ps->p++;
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != q) {
    if (*ps->p == '\\' || n + 1 >= cap) return false;
    out[n++] = *ps->p++;
  }
  if (ps->p >= ps->end) return false;
  ps->p++;
  out[n] = '\0';
  return true;
}

static bool word(parser *ps, const char *w) {
  skip_ws(ps);
  size_t n = strlen(w);
  if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0) {
    ps->p += n;
    return true;
  }
  return false;
}

static tb_status parse_descr_code(const parser *ps, const char *given, tb_dtype *out) {
  char code[32];
  snprintf(code, sizeof code, "%s", given);
  /* one-byte types have no byte order: '<u1', '>u1' and '|u1' are the same */
  if (strlen(code) == 3 && code[2] == '1' && (code[0] == '<' || code[0] == '>' || code[0] == '=')) code[0] = '|';
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (strcmp(code, codes[i].descr) == 0) return (*out = codes[i].dtype), TB_OK;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(code, aliases[i].descr) == 0) return (*out = aliases[i].dtype), TB_OK;
  if (code[0] == '>')
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: dtype '%s' is big-endian; TensorBridge reads little-endian .npy files only (in numpy: "
                    "a.astype(a.dtype.newbyteorder('<')))",
                    ps->path, code);
  if (strcmp(code, "|V1") == 0 || strcmp(code, "<V1") == 0)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: dtype '%s' is a 1-byte opaque type (an ml_dtypes fp8 array): e4m3fn and e5m2 both write "
                    "it, so the format is unknown; save it with tb_npy_save, or as f32",
                    ps->path, code);
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: dtype '%s' is not supported; the supported codes are <f8 <f4 <f2 <i8 <i4 <i2 |i1 |u1 |b1, "
                  "<V2 (bf16) and the structured bf16/fp8 forms of docs/npy.md",
                  ps->path, code);
}

/* descr: a code string, or [('name', 'code')] for bf16 / fp8. */
static tb_status parse_descr(parser *ps, tb_dtype *out) {
  char code[32], field[32];
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == '[') {
    ps->p++;
    if (!take(ps, '(') || !string_lit(ps, field, sizeof field) || !take(ps, ',') || !string_lit(ps, code, sizeof code) ||
        !take(ps, ')'))
      return bad(ps, "'descr' is a list but not [('name', 'code')]");
    take(ps, ',');
    if (!take(ps, ']')) return bad(ps, "'descr' has more than one field");
    for (size_t i = 0; i < sizeof structured / sizeof structured[0]; i++)
      if (strcmp(field, structured[i].field) == 0 && strcmp(code, structured[i].code) == 0)
        return (*out = structured[i].dtype), TB_OK;
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: structured dtype [('%s', '%s')] is not supported; TensorBridge reads one-field structured "
                    "dtypes only for bf16 [('bf16', '<u2')] and fp8 [('fp8_e4m3fn', '|u1')], [('fp8_e5m2', '|u1')]",
                    ps->path, field, code);
  }
  if (!string_lit(ps, code, sizeof code)) return bad(ps, "'descr' is not a string");
  return parse_descr_code(ps, code, out);
}

static tb_status parse_shape(parser *ps, npy_header *h) {
  if (!take(ps, '(')) return bad(ps, "'shape' is not a tuple");
  h->ndim = 0;
  uint64_t bytes = tb_dtype_size(h->dtype);
  for (;;) {
    skip_ws(ps);
    if (take(ps, ')')) break;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return bad(ps, "'shape' holds something other than sizes");
    uint64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
      v = v * 10 + (uint64_t)(*ps->p++ - '0');
      if (v > (uint64_t)INT64_MAX / 10)
        return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: .npy shape dimension %zu is too large", ps->path, h->ndim);
    }
    if (ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l')) ps->p++; /* Python 2 longs */
    if (h->ndim == TB_MAX_DIMS)
      return tb_error(TB_ERR_UNSUPPORTED, "%s: the .npy shape has more than %d dimensions", ps->path, TB_MAX_DIMS);
    if (v && bytes > (uint64_t)INT64_MAX / v)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: the .npy shape's size overflows (dimension %zu is %llu)", ps->path,
                      h->ndim, (unsigned long long)v);
    if (v) bytes *= v;
    else bytes = 0;
    h->shape[h->ndim++] = (int64_t)v;
    if (!take(ps, ',')) {
      if (!take(ps, ')')) return bad(ps, "'shape' is not a tuple of sizes");
      if (h->ndim == 1) return bad(ps, "a 1-dimensional 'shape' needs a trailing comma, as in (3,)");
      break;
    }
  }
  return TB_OK;
}

static tb_status parse_header(const char *path, const char *text, size_t len, npy_header *h) {
  parser ps = {text, text + len, text, path};
  bool seen[3] = {false, false, false};
  if (!take(&ps, '{')) return bad(&ps, "the header is not a dict");
  for (;;) {
    if (take(&ps, '}')) break;
    char key[32];
    if (!string_lit(&ps, key, sizeof key) || !take(&ps, ':')) return bad(&ps, "expected 'key': value");
    tb_status st;
    if (strcmp(key, "descr") == 0 && !seen[0]) {
      seen[0] = true;
      if ((st = parse_descr(&ps, &h->dtype)) != TB_OK) return st;
    } else if (strcmp(key, "fortran_order") == 0 && !seen[1]) {
      seen[1] = true;
      if (word(&ps, "True")) h->fortran = true;
      else if (word(&ps, "False")) h->fortran = false;
      else return bad(&ps, "'fortran_order' is not True or False");
    } else if (strcmp(key, "shape") == 0 && !seen[2]) {
      if (!seen[0]) return bad(&ps, "'shape' comes before 'descr'"); /* numpy sorts the keys */
      seen[2] = true;
      if ((st = parse_shape(&ps, h)) != TB_OK) return st;
    } else {
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: key '%s' is %s", path, key,
                      (strcmp(key, "descr") && strcmp(key, "fortran_order") && strcmp(key, "shape")) ? "unknown"
                                                                                                     : "repeated");
    }
    if (!take(&ps, ',')) {
      if (!take(&ps, '}')) return bad(&ps, "expected ',' or '}'");
      break;
    }
  }
  skip_ws(&ps);
  if (ps.p != ps.end) return bad(&ps, "text after the dict");
  if (!seen[0] || !seen[1] || !seen[2])
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: the key '%s' is missing", path,
                    !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
  return TB_OK;
}

/* ---- loading ---------------------------------------------------------------------------------- */

static tb_status read_exact(FILE *f, void *dst, size_t n, const char *path, const char *what, size_t *got) {
  *got = fread(dst, 1, n, f);
  if (*got == n) return TB_OK;
  if (ferror(f)) return tb_error(TB_ERR_IO, "%s: read error in the %s: %s", path, what, strerror(errno));
  return tb_error(TB_ERR_IO, "%s: the file ends in the %s (%zu of %zu bytes)", path, what, *got, n);
}

/* Fortran order (first index fastest) to row-major, element size esize. */
static void fortran_to_c(const uint8_t *src, uint8_t *dst, const npy_header *h, size_t esize, int64_t numel) {
  int64_t idx[TB_MAX_DIMS] = {0};
  int64_t fstride[TB_MAX_DIMS];
  int64_t s = 1;
  for (size_t d = 0; d < h->ndim; d++) {
    fstride[d] = s;
    s *= h->shape[d];
  }
  for (int64_t i = 0; i < numel; i++) {
    int64_t off = 0;
    for (size_t d = 0; d < h->ndim; d++) off += idx[d] * fstride[d];
    memcpy(dst + (size_t)i * esize, src + (size_t)off * esize, esize);
    for (size_t d = h->ndim; d-- > 0;) {
      if (++idx[d] < h->shape[d]) break;
      idx[d] = 0;
    }
  }
}

static tb_status load_file(FILE *f, const char *path, tb_backend *backend, tb_tensor **out) {
  uint8_t pre[12];
  size_t got;
  tb_status st = read_exact(f, pre, 8, path, "magic and version", &got);
  if (st != TB_OK) return got < 6 ? tb_error(TB_ERR_INVALID_ARGUMENT, "%s: not a .npy file (%zu bytes)", path, got) : st;
  if (memcmp(pre, "\x93NUMPY", 6) != 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: not a .npy file: the magic string \\x93NUMPY is missing", path);
  int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: .npy format version %d.%d is not supported (1.0, 2.0 and 3.0 are)", path,
                    major, minor);
  size_t len_bytes = major == 1 ? 2 : 4;
  if ((st = read_exact(f, pre + 8, len_bytes, path, "header length", &got)) != TB_OK) return st;
  uint32_t hlen = major == 1 ? (uint32_t)(pre[8] | pre[9] << 8)
                             : (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
  if (hlen == 0 || hlen > TB_NPY_MAX_HEADER)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: .npy header length %u is %s (at most %u bytes)", path, hlen,
                    hlen ? "too large" : "zero", TB_NPY_MAX_HEADER);
  char *text = malloc(hlen);
  if (!text) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no memory for a %u-byte .npy header", path, hlen);
  st = read_exact(f, text, hlen, path, "header", &got);
  npy_header h;
  memset(&h, 0, sizeof h);
  if (st == TB_OK && text[hlen - 1] != '\n')
    st = tb_error(TB_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: it does not end with a newline", path);
  for (uint32_t i = 0; st == TB_OK && major < 3 && i < hlen; i++)
    if ((unsigned char)text[i] > 127)
      st = tb_error(TB_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: byte %u is not ASCII (version %d)", path, i, major);
  if (st == TB_OK) st = parse_header(path, text, hlen, &h);
  free(text);
  if (st != TB_OK) return st;

  /* The data the shape needs must be in the file before anything is allocated for it: a 100-byte file
   * whose header claims gigabytes is refused here, not after a huge allocation. */
  struct stat sb;
  long pos = ftell(f);
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && pos >= 0 && (uint64_t)sb.st_size >= (uint64_t)pos) {
    uint64_t left = (uint64_t)sb.st_size - (uint64_t)pos, need = tb_dtype_size(h.dtype);
    bool too_big = false;
    for (size_t i = 0; i < h.ndim && !too_big; i++)
      too_big = h.shape[i] < 0 || __builtin_mul_overflow(need, (uint64_t)h.shape[i], &need);
    if (too_big || need > left) {
      char dims[160], needed[32];
      shape_text(&h, dims, sizeof dims);
      snprintf(needed, sizeof needed, too_big ? "more than 2^64" : "%llu", (unsigned long long)need);
      return tb_error(TB_ERR_IO, "%s: the .npy data is %llu bytes but shape %s of %s needs %s: the file is truncated",
                      path, (unsigned long long)left, dims, tb_dtype_name(h.dtype), needed);
    }
  }

  tb_tensor *t = NULL;
  if ((st = tb_tensor_create(backend, h.dtype, h.ndim, h.shape, &t)) != TB_OK) return st;
  size_t nbytes = tb_tensor_nbytes(t);
  size_t esize = tb_dtype_size(h.dtype);
  uint8_t *buf = malloc(nbytes ? nbytes : 1);
  uint8_t *reordered = h.fortran && h.ndim > 1 ? malloc(nbytes ? nbytes : 1) : NULL;
  if (!buf || (h.fortran && h.ndim > 1 && !reordered)) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no memory for %zu bytes of .npy data", path, nbytes);
    goto fail;
  }
  got = fread(buf, 1, nbytes, f);
  if (got != nbytes) {
    char dims[160];
    shape_text(&h, dims, sizeof dims);
    st = tb_error(TB_ERR_IO, "%s: the .npy data is %zu bytes but shape %s of %s needs %zu: the file is truncated",
                  path, got, dims, tb_dtype_name(h.dtype), nbytes);
    goto fail;
  }
  if (fgetc(f) != EOF) {
    st = tb_error(TB_ERR_INVALID_ARGUMENT, "%s: the .npy file has bytes after the %zu bytes of data its shape says",
                  path, nbytes);
    goto fail;
  }
  if (reordered) fortran_to_c(buf, reordered, &h, esize, tb_tensor_numel(t));
  if (nbytes && (st = tb_tensor_copy_from_host(t, reordered ? reordered : buf, nbytes)) != TB_OK) goto fail;
  free(buf);
  free(reordered);
  *out = t;
  return TB_OK;
fail:
  free(buf);
  free(reordered);
  tb_tensor_destroy(t);
  return st;
}

tb_status tb_npy_load(const char *path, tb_backend *backend, tb_tensor **out_tensor) {
  if (out_tensor) *out_tensor = NULL;
  if (!path || !backend || !out_tensor)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_npy_load: path, backend and out_tensor must not be NULL");
  int fd;
  tb_status opened = tb_fs_open_regular(path, ".npy file", &fd, NULL);
  if (opened != TB_OK) return opened;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "cannot read the .npy file %s: %s", path, strerror(e));
  }
  tb_status st = load_file(f, path, backend, out_tensor);
  fclose(f);
  return st;
}

/* ---- saving ----------------------------------------------------------------------------------- */

static const char *descr_for(tb_dtype dtype, char *buf, size_t cap) {
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (codes[i].dtype == dtype) return snprintf(buf, cap, "'%s'", codes[i].descr), buf;
  for (size_t i = 0; i < sizeof structured / sizeof structured[0]; i++)
    if (structured[i].dtype == dtype)
      return snprintf(buf, cap, "[('%s', '%s')]", structured[i].field, structured[i].code), buf;
  return NULL;
}

tb_status tb_npy_save(const char *path, const tb_tensor *tensor) {
  if (!path || !tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_npy_save: path and tensor must not be NULL");
  char descr[64];
  tb_dtype dtype = tb_tensor_dtype(tensor);
  if (!descr_for(dtype, descr, sizeof descr))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_npy_save: dtype %d is out of range", (int)dtype);
  char header[512];
  size_t n = (size_t)snprintf(header, sizeof header, "{'descr': %s, 'fortran_order': False, 'shape': (", descr);
  size_t ndim = tb_tensor_ndim(tensor);
  const int64_t *shape = tb_tensor_shape(tensor);
  for (size_t i = 0; i < ndim; i++)
    n += (size_t)snprintf(header + n, sizeof header - n, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
  n += (size_t)snprintf(header + n, sizeof header - n, "), }");
  /* pad with spaces so that magic (6) + version (2) + length (2) + header ends on a 64-byte boundary */
  size_t total = (10 + n + 1 + 63) / 64 * 64;
  if (total - 10 > sizeof header - 1) return tb_error(TB_ERR_INTERNAL, "tb_npy_save: header too long");
  memset(header + n, ' ', total - 10 - n - 1);
  header[total - 10 - 1] = '\n';
  size_t hlen = total - 10;

  size_t nbytes = tb_tensor_nbytes(tensor);
  void *data = malloc(nbytes ? nbytes : 1);
  if (!data) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_npy_save: no memory for %zu bytes to write %s", nbytes, path);
  tb_status st = nbytes ? tb_tensor_copy_to_host(tensor, data, nbytes) : TB_OK;
  if (st != TB_OK) {
    free(data);
    return st;
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    int e = errno;
    free(data);
    return tb_error(e == EACCES ? TB_ERR_PERMISSION : TB_ERR_IO, "cannot create the .npy file %s: %s", path, strerror(e));
  }
  uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(hlen & 0xff), (uint8_t)(hlen >> 8)};
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, hlen, f) == hlen &&
            (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
  int e = errno;
  if (fclose(f) != 0 && ok) { /* the buffered bytes failed on close (a full disk): that errno says why */
    e = errno;
    ok = false;
  }
  free(data);
  if (!ok) {
    remove(path);
    return tb_error(TB_ERR_IO, "writing the .npy file %s failed: %s", path, strerror(e));
  }
  return TB_OK;
}
