/* `tb convert IN OUT [--dtype D] [--name NAME]`: between safetensors and .npy files (by extension), with
 * floating tensors converted to D: widening is exact, narrowing rounds to nearest even (tb_convert's rule)
 * and says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "common.h"
#include "convert.h"

static const char help[] =
    "Usage: tb convert IN OUT [--dtype D] [--name NAME]\n"
    "\n"
    "Convert between safetensors (.safetensors) and NumPy (.npy) files, chosen by extension:\n"
    "  .safetensors -> .safetensors  every tensor copied, metadata kept; floating tensors to D\n"
    "  .npy -> .safetensors          one tensor, named NAME (default: IN's file name without .npy)\n"
    "  .safetensors -> .npy          the tensor NAME (may be left out when the file holds one tensor)\n"
    "  .npy -> .npy                  the array, floating values to D\n"
    "\n"
    "Options:\n"
    "  --dtype D    f64, f32, f16, bf16, fp8_e4m3fn, fp8_e5m2: floating tensors become D. Widening is\n"
    "               exact; narrowing rounds to nearest, ties to even (fp8 saturates at its largest\n"
    "               value), and a note says how many tensors were narrowed. Integer and bool tensors\n"
    "               are kept as they are.\n"
    "  --name NAME  the tensor's name (see above)\n"
    "  -h, --help   show this help\n"
    "\n"
    "Details: docs/checkpoints.md. Exit codes: 0 success, 1 a file is malformed, 2 usage error or a file\n"
    "or tensor not found, 4 a file cannot be read or written (permission denied, disk full).\n";

typedef struct convert_opts {
  const char *in, *out, *name;
  bool has_dtype;
  tb_dtype dtype;
} convert_opts;

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_float(tb_dtype d) {
  return d == TB_DTYPE_F64 || d == TB_DTYPE_F32 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16 || d == TB_DTYPE_FP8_E4M3FN ||
         d == TB_DTYPE_FP8_E5M2;
}

/* Bits of precision and exponent range, to tell widening from narrowing. */
static bool float_widens(tb_dtype from, tb_dtype to) {
  static const int mant[] = {[TB_DTYPE_F64] = 52, [TB_DTYPE_F32] = 23, [TB_DTYPE_F16] = 10, [TB_DTYPE_BF16] = 7,
                             [TB_DTYPE_FP8_E4M3FN] = 3, [TB_DTYPE_FP8_E5M2] = 2};
  static const int expo[] = {[TB_DTYPE_F64] = 11, [TB_DTYPE_F32] = 8, [TB_DTYPE_F16] = 5, [TB_DTYPE_BF16] = 8,
                             [TB_DTYPE_FP8_E4M3FN] = 4, [TB_DTYPE_FP8_E5M2] = 5};
  return from == to || (mant[to] >= mant[from] && expo[to] >= expo[from]);
}

static int parse(int argc, char **argv, convert_opts *o, bool *help_only) {
  for (int i = 0; i < argc; i++) {
    const char *w = argv[i];
    if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0) {
      *help_only = true;
      continue;
    }
    const char *value = NULL;
    bool is_dtype = strncmp(w, "--dtype", 7) == 0 && (w[7] == '\0' || w[7] == '=');
    bool is_name = strncmp(w, "--name", 6) == 0 && (w[6] == '\0' || w[6] == '=');
    if (is_dtype || is_name) {
      const char *eq = strchr(w, '=');
      if (eq) value = eq + 1;
      else if (i + 1 < argc) value = argv[++i];
      else return tbc_usage("convert", "'tb convert %s' needs a value", is_dtype ? "--dtype" : "--name");
      if (is_name) {
        o->name = value;
        continue;
      }
      if (tb_dtype_parse(value, &o->dtype) != TB_OK) return tbc_usage("convert", "%s", tb_last_error());
      if (!is_float(o->dtype))
        return tbc_usage("convert", "'tb convert --dtype' takes a floating dtype (f64 f32 f16 bf16 fp8_e4m3fn fp8_e5m2), not '%s'", value);
      o->has_dtype = true;
      continue;
    }
    if (w[0] == '-' && w[1]) return tbc_usage("convert", "unknown option '%s' for 'tb convert'", w);
    if (!o->in) o->in = w;
    else if (!o->out) o->out = w;
    else return tbc_usage("convert", "unexpected argument '%s' for 'tb convert' (IN is '%s', OUT is '%s')", w, o->in, o->out);
  }
  if (*help_only) return TBC_EXIT_OK;
  if (!o->in || !o->out) return tbc_usage("convert", "'tb convert' needs IN and OUT files");
  const char *files[2] = {o->in, o->out};
  for (int k = 0; k < 2; k++)
    if (!ends_with(files[k], ".safetensors") && !ends_with(files[k], ".npy"))
      return tbc_usage("convert", "'%s' ends neither in .safetensors nor in .npy", files[k]);
  return TBC_EXIT_OK;
}

/* t converted to the target dtype when it is floating (a new tensor in *out, or t itself). */
static tb_status retype(const convert_opts *o, tb_backend *cpu, tb_tensor *t, tb_tensor **out, int *narrowed) {
  *out = t;
  tb_dtype from = tb_tensor_dtype(t);
  if (!o->has_dtype || !is_float(from) || from == o->dtype) return TB_OK;
  if (!float_widens(from, o->dtype)) (*narrowed)++;
  tb_tensor *c = NULL;
  tb_status st = tb_tensor_create(cpu, o->dtype, tb_tensor_ndim(t), tb_tensor_shape(t), &c);
  if (st != TB_OK) return st;
  st = tb_convert(from, tb_tensor_host_data(t), o->dtype, tb_tensor_host_data(c), (size_t)tb_tensor_numel(t), true);
  if (st != TB_OK) {
    tb_tensor_destroy(c);
    return st;
  }
  *out = c;
  return TB_OK;
}

static void print_line(const char *name, const tb_tensor *before, const tb_tensor *after) {
  printf("%s: %s [", name, tb_dtype_name(tb_tensor_dtype(before)));
  for (size_t d = 0; d < tb_tensor_ndim(before); d++) printf("%s%lld", d ? ", " : "", (long long)tb_tensor_shape(before)[d]);
  printf("]");
  if (tb_tensor_dtype(after) != tb_tensor_dtype(before)) printf(" -> %s", tb_dtype_name(tb_tensor_dtype(after)));
  printf("\n");
}

/* The default tensor name of a .npy file: its base name without the extension. */
static void npy_name(const char *path, char *buf, size_t cap) {
  const char *slash = strrchr(path, '/');
  snprintf(buf, cap, "%s", slash ? slash + 1 : path);
  size_t n = strlen(buf);
  if (n > 4) buf[n - 4] = '\0';
}

static int convert(const convert_opts *o) {
  bool in_st = ends_with(o->in, ".safetensors"), out_st = ends_with(o->out, ".safetensors");
  tb_backend *cpu = NULL;
  tb_status st = tb_backend_create("cpu", &cpu);
  if (st != TB_OK) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(st);
  }
  tb_safetensors *in = NULL;
  size_t n = 1, n_meta = 0;
  tb_tensor **src = NULL, **dst = NULL;
  const char **names = NULL, **keys = NULL, **values = NULL;
  char default_name[512];
  int code = TBC_EXIT_OK, narrowed = 0;
  if (in_st) {
    if ((st = tb_safetensors_open(o->in, &in)) != TB_OK) goto library_error;
    n = tb_safetensors_count(in);
    n_meta = tb_safetensors_metadata_count(in);
  }
  src = calloc(n ? n : 1, sizeof *src);
  dst = calloc(n ? n : 1, sizeof *dst);
  names = calloc(n ? n : 1, sizeof *names);
  keys = calloc(n_meta ? n_meta : 1, sizeof *keys);
  values = calloc(n_meta ? n_meta : 1, sizeof *values);
  if (!src || !dst || !names || !keys || !values) {
    tbc_error("out of memory");
    code = TBC_EXIT_FAILURE;
    goto done;
  }
  if (in_st) {
    for (size_t i = 0; i < n; i++) names[i] = tb_safetensors_name(in, i);
    for (size_t i = 0; i < n_meta; i++) tb_safetensors_metadata_at(in, i, &keys[i], &values[i]);
    if (!out_st) { /* one tensor to .npy */
      if (!o->name && n != 1) {
        tbc_error("%s holds %zu tensors; pick one with --name (the first is '%s')", o->in, n, n ? names[0] : "");
        code = TBC_EXIT_USAGE;
        goto done;
      }
      const char *pick = o->name ? o->name : names[0];
      n = 1;
      names[0] = pick;
      if ((st = tb_safetensors_read(in, pick, cpu, &src[0])) != TB_OK) goto library_error;
    } else {
      for (size_t i = 0; i < n; i++)
        if ((st = tb_safetensors_read(in, names[i], cpu, &src[i])) != TB_OK) goto library_error;
    }
  } else {
    if ((st = tb_npy_load(o->in, cpu, &src[0])) != TB_OK) goto library_error;
    npy_name(o->in, default_name, sizeof default_name);
    names[0] = o->name ? o->name : default_name;
  }
  for (size_t i = 0; i < n; i++) {
    if ((st = retype(o, cpu, src[i], &dst[i], &narrowed)) != TB_OK) goto library_error;
    print_line(names[i], src[i], dst[i]);
  }
  if (out_st) st = tb_safetensors_write(o->out, n, names, (const tb_tensor *const *)dst, in_st ? n_meta : 0, keys, values);
  else st = tb_npy_save(o->out, dst[0]);
  if (st != TB_OK) goto library_error;
  if (narrowed)
    printf("note: %d tensor%s narrowed to %s: values rounded to nearest, ties to even%s; the conversion is not exact\n",
           narrowed, narrowed == 1 ? "" : "s", tb_dtype_name(o->dtype),
           o->dtype == TB_DTYPE_FP8_E4M3FN || o->dtype == TB_DTYPE_FP8_E5M2 ? ", beyond the range saturated"
                                                                             : ", beyond the range +-Inf");
  printf("wrote %s (%zu tensor%s)\n", o->out, n, n == 1 ? "" : "s");
  goto done;
library_error: /* reading or writing the files: a permission error is exit 4 */
  tbc_error("%s", tb_last_error());
  code = tbc_exit_for_file_status(st);
done:
  for (size_t i = 0; src && i < n; i++) {
    if (dst && dst[i] && dst[i] != src[i]) tb_tensor_destroy(dst[i]);
    tb_tensor_destroy(src[i]);
  }
  free(src);
  free(dst);
  free(names);
  free(keys);
  free(values);
  tb_safetensors_close(in);
  tb_backend_destroy(cpu);
  return code;
}

int tbc_cmd_convert(int argc, char **argv) {
  convert_opts o = {0};
  bool help_only = false;
  int code = parse(argc, argv, &o, &help_only);
  if (code == TBC_EXIT_OK && help_only) fputs(help, stdout);
  else if (code == TBC_EXIT_OK) code = convert(&o);
  return code;
}
