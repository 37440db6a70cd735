/* Einsum equation parsing and label sizes (see einsum_parse.h). */
#include "ops/nn/einsum_parse.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"

static int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

static char label_char(int id) { return id < 26 ? (char)('A' + id) : (char)('a' + id - 26); }

static tb_status eq_error(const char *equation, const char *why) {
  return tb_error(TB_ERR_MODEL, "equation '%s': %s", equation, why);
}

/* Parse one term [begin, end) into labels; rank is the input's rank (or SIZE_MAX for the output, where
 * the ellipsis stands for ell_rank axes). */
static tb_status parse_term(const char *equation, const char *begin,
                            const char *end, size_t rank, size_t ell_rank, int *labels, size_t *n_labels,
                            size_t *ell_here) {
  size_t letters = 0;
  int ellipses = 0;
  for (const char *p = begin; p < end; p++) {
    if (*p == '.') {
      if (end - p < 3 || p[1] != '.' || p[2] != '.') return eq_error(equation, "a '.' outside an ellipsis");
      ellipses++;
      p += 2;
    } else if (letter_id(*p) >= 0) {
      letters++;
    } else if (!isspace((unsigned char)*p)) {
      return eq_error(equation, "a character that is not a letter, '...', ',' or '->'");
    }
  }
  if (ellipses > 1) return eq_error(equation, "a term has more than one ellipsis");
  size_t ell = 0;
  if (rank != SIZE_MAX) {
    if (ellipses ? letters > rank : letters != rank) {
      char why[160];
      snprintf(why, sizeof why, "a term has %zu letters for an input of rank %zu", letters, rank);
      return eq_error(equation, why);
    }
    ell = ellipses ? rank - letters : 0;
  } else {
    ell = ellipses ? ell_rank : 0;
  }
  if (letters + ell > TB_MAX_DIMS) return eq_error(equation, "a term has more than 8 axes");
  size_t n = 0;
  for (const char *p = begin; p < end; p++) {
    if (*p == '.') {
      /* The ellipsis stands for the last `ell` of the ell_rank broadcast axes. */
      for (size_t k = 0; k < ell; k++) labels[n++] = NN_EINSUM_LETTERS + (int)(ell_rank - ell + k);
      p += 2;
    } else if (letter_id(*p) >= 0) {
      labels[n++] = letter_id(*p);
    }
  }
  *n_labels = n;
  *ell_here = ellipses ? ell : 0;
  return TB_OK;
}

tb_status tb_nn_einsum_parse(const char *equation, size_t n_inputs,
                          const size_t *ranks, nn_einsum *out) {
  memset(out, 0, sizeof *out);
  if (n_inputs == 0 || n_inputs > NN_EINSUM_MAX_INPUTS) return eq_error(equation, "1 to 16 inputs are supported");
  out->n_inputs = n_inputs;
  const char *arrow = strstr(equation, "->");
  const char *lhs_end = arrow ? arrow : equation + strlen(equation);
  /* Ellipsis rank: the most axes any input's ellipsis stands for. */
  size_t ell_rank = 0;
  const char *p = equation;
  for (size_t i = 0; i < n_inputs; i++) {
    const char *end = memchr(p, ',', (size_t)(lhs_end - p));
    if (!end) end = lhs_end;
    if (i + 1 < n_inputs && end == lhs_end) return eq_error(equation, "fewer terms than inputs");
    if (i + 1 == n_inputs && end != lhs_end) return eq_error(equation, "more terms than inputs");
    size_t n = 0, ell = 0;
    /* First pass with ell_rank = rank to learn this input's ellipsis size. */
    int tmp[TB_MAX_DIMS];
    tb_status st = parse_term(equation, p, end, ranks[i], ranks[i] > TB_MAX_DIMS ? 0 : ranks[i], tmp, &n, &ell);
    if (st != TB_OK) return st;
    if (ell > ell_rank) ell_rank = ell;
    p = end + 1;
  }
  out->ell_rank = ell_rank;
  p = equation;
  for (size_t i = 0; i < n_inputs; i++) {
    const char *end = memchr(p, ',', (size_t)(lhs_end - p));
    if (!end) end = lhs_end;
    size_t ell = 0;
    tb_status st = parse_term(equation, p, end, ranks[i], ell_rank, out->label[i], &out->rank[i], &ell);
    if (st != TB_OK) return st;
    for (size_t k = 0; k < out->rank[i]; k++) out->used[out->label[i][k]] = true;
    p = end + 1;
  }
  if (arrow) {
    const char *rhs = arrow + 2;
    if (strchr(rhs, ',') || strstr(rhs, "->")) return eq_error(equation, "the output has more than one term");
    size_t ell = 0;
    tb_status st = parse_term(equation, rhs, rhs + strlen(rhs), SIZE_MAX, ell_rank, out->out_label,
                              &out->out_rank, &ell);
    if (st != TB_OK) return st;
    bool seen[NN_EINSUM_LABELS] = {false};
    for (size_t k = 0; k < out->out_rank; k++) {
      int l = out->out_label[k];
      if (!out->used[l] || seen[l]) {
        char why[96];
        snprintf(why, sizeof why, "output label '%c' is %s", l < NN_EINSUM_LETTERS ? label_char(l) : '.',
                 seen[l] ? "listed twice" : "not in any input");
        return eq_error(equation, why);
      }
      seen[l] = true;
    }
    /* Ellipsis axes the output omits are summed, as numpy does. */
    return TB_OK;
  }
  /* Implicit output: the ellipsis axes, then the letters that appear once, in ASCII order (A-Z, a-z). */
  int count[NN_EINSUM_LABELS] = {0};
  for (size_t i = 0; i < n_inputs; i++)
    for (size_t k = 0; k < out->rank[i]; k++) count[out->label[i][k]]++;
  size_t n = 0;
  for (size_t k = 0; k < ell_rank; k++) out->out_label[n++] = NN_EINSUM_LETTERS + (int)k;
  for (int l = 0; l < NN_EINSUM_LETTERS; l++)
    if (count[l] == 1) {
      if (n == TB_MAX_DIMS) return eq_error(equation, "the output has more than 8 axes");
      out->out_label[n++] = l;
    }
  out->out_rank = n;
  return TB_OK;
}

tb_status tb_nn_einsum_sizes(const nn_einsum *e, const int64_t *const *dims, int64_t *sizes) {
  /* Letters start unknown; ellipsis axes start at 1 and stretch to the first size other than 1. */
  for (int l = 0; l < NN_EINSUM_LABELS; l++) sizes[l] = l < NN_EINSUM_LETTERS ? -1 : 1;
  for (size_t i = 0; i < e->n_inputs; i++)
    for (size_t k = 0; k < e->rank[i]; k++) {
      int l = e->label[i][k];
      int64_t d = dims[i] ? dims[i][k] : -1;
      bool ell = l >= NN_EINSUM_LETTERS;
      if (d < 0) {
        if (ell && sizes[l] == 1) sizes[l] = -1;
        continue;
      }
      if (ell && d == 1) continue;
      if (sizes[l] < 0 || (ell && sizes[l] == 1)) {
        sizes[l] = d;
      } else if (sizes[l] != d) {
        char name[4] = "...";
        if (!ell) name[0] = label_char(l), name[1] = '\0';
        return tb_error(TB_ERR_MODEL, "Einsum label '%s' has size %lld in one place and %lld in another", name,
                        (long long)sizes[l], (long long)d);
      }
    }
  return TB_OK;
}
