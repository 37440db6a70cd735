/* `tb bench --chart FILE.svg`: a horizontal bar chart written by hand. One bar per configuration is the
 * median latency, a whisker spans p10 to p90, the median is written at the end of the bar; the x axis is
 * in milliseconds with a grid; the title names the model and the machine; one colour per backend, with a
 * legend. Failed configurations keep their row with the word "failed" instead of a bar. */
#include <stdio.h>
#include <string.h>
#include "bench_common.h"

enum { WIDTH = 960, ROW_PITCH = 40, BAR_HEIGHT = 24, TOP = 132, RIGHT_SPACE = 130, BOTTOM_SPACE = 70 };

static const char font[] = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

/* Colours that stay apart for people with the common colour-vision deficiencies (Okabe-Ito). */
static const char *colour_of(const char *backend) {
  static const struct {
    const char *name, *colour;
  } colours[] = {{"cpu", "#0072B2"},  {"cuda", "#009E73"},   {"rocm", "#D55E00"}, {"xpu", "#56B4E9"},
                 {"tpu", "#F0E442"},  {"vulkan", "#E69F00"}, {"opencl", "#CC79A7"}};
  for (size_t i = 0; i < sizeof colours / sizeof colours[0]; i++)
    if (strcmp(colours[i].name, backend) == 0) return colours[i].colour;
  return "#777777";
}

static void add_escaped(tbc_buf *b, const char *s) {
  char one[2] = {0, 0};
  for (; *s; s++) {
    switch (*s) {
    case '&': tbc_buf_add(b, "&amp;"); break;
    case '<': tbc_buf_add(b, "&lt;"); break;
    case '>': tbc_buf_add(b, "&gt;"); break;
    case '"': tbc_buf_add(b, "&quot;"); break;
    default:
      one[0] = (unsigned char)*s < 0x20 ? ' ' : *s;
      tbc_buf_add(b, one);
    }
  }
}

/* A step of 1, 2 or 5 times a power of ten that cuts [0, max] into about six parts. */
static double nice_step(double max) {
  double raw = max / 6, m = 1;
  while (m * 10 <= raw) m *= 10;
  while (m > raw) m /= 10;
  double f = raw / m;
  return m * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10);
}

static void label_of(const tbc_bench_row *row, char *buf, size_t size) {
  snprintf(buf, size, "%s %s", row->device, tb_opt_level_name(row->level));
}

static void text(tbc_buf *b, double x, double y, int size, const char *anchor, const char *extra, const char *s) {
  tbc_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s>", x, y, size, anchor, extra);
  add_escaped(b, s);
  tbc_buf_add(b, "</text>\n");
}

static void legend(const tbc_bench_report *r, tbc_buf *b, double x0) {
  const char *seen[TBC_BENCH_MAX_ROWS];
  size_t count = 0;
  double x = x0;
  for (size_t i = 0; i < r->row_count; i++) {
    bool known = !r->rows[i].ok; /* a backend with no bar needs no colour */
    for (size_t k = 0; k < count; k++) known |= strcmp(seen[k], r->rows[i].backend) == 0;
    if (known) continue;
    seen[count++] = r->rows[i].backend;
    tbc_buf_addf(b, "<rect class=\"legend\" x=\"%.1f\" y=\"78\" width=\"16\" height=\"16\" fill=\"%s\"/>\n", x,
                 colour_of(r->rows[i].backend));
    text(b, x + 22, 91, 14, "start", "", r->rows[i].backend);
    x += 34 + 9.0 * (double)strlen(r->rows[i].backend);
  }
}

void tbc_bench_svg(const tbc_bench_report *r, tbc_buf *b) {
  size_t longest = 8;
  double max = 0;
  for (size_t i = 0; i < r->row_count; i++) {
    char label[96];
    label_of(&r->rows[i], label, sizeof label);
    if (strlen(label) > longest) longest = strlen(label);
    const tbc_bench_row *row = &r->rows[i];
    if (row->ok && row->stats.p90 > max) max = row->stats.p90;
    if (row->ok && row->stats.median > max) max = row->stats.median;
  }
  if (!(max > 0)) max = 1;
  double step = nice_step(max * 1.02);
  size_t ticks = (size_t)(max * 1.02 / step) + 1;
  double axis_max = step * (double)ticks;
  double left = 30 + 8.4 * (double)longest, right = WIDTH - RIGHT_SPACE;
  double plot_height = (double)(r->row_count ? r->row_count : 1) * ROW_PITCH;
  double height = TOP + plot_height + BOTTOM_SPACE;
  double scale = (right - left) / axis_max;

  tbc_buf_addf(b,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
               "font-family=\"%s\" fill=\"#222222\">\n",
               WIDTH, height, WIDTH, height, font);
  tbc_buf_addf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n", WIDTH, height);
  const char *base = strrchr(r->model, '/');
  char line[512];
  snprintf(line, sizeof line, "Median latency of %s on %s", base ? base + 1 : r->model,
           r->machine[0] ? r->machine : "an unknown CPU");
  text(b, 24, 34, 20, "start", " font-weight=\"bold\"", line);
  int used = snprintf(line, sizeof line, "bars: median of %d timed runs after %d warm-up; whiskers: 10th to 90th "
                      "percentile; precision %s", r->iters, r->warmup, r->precision);
  if (r->has_batch && used > 0 && (size_t)used < sizeof line)
    snprintf(line + used, sizeof line - (size_t)used, "; batch %lld", (long long)r->batch);
  text(b, 24, 60, 14, "start", " fill=\"#444444\"", line);
  legend(r, b, 24);

  /* grid and x axis */
  double bottom = TOP + plot_height;
  for (size_t t = 0; t <= ticks; t++) {
    double v = step * (double)t, x = left + v * scale;
    tbc_buf_addf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\" stroke-width=\"1\"/>\n", x,
                 TOP - 6, x, bottom);
    char tick[32];
    snprintf(tick, sizeof tick, "%g", v);
    text(b, x, bottom + 20, 13, "middle", "", tick);
  }
  tbc_buf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n",
               left, bottom, right, bottom);
  tbc_buf_addf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n",
               left, TOP - 6, left, bottom);
  text(b, (left + right) / 2, bottom + 48, 15, "middle", "", "latency per inference (ms)");
  snprintf(line, sizeof line, "device and level");
  text(b, left - 10, TOP - 14, 13, "end", " fill=\"#444444\"", line);

  for (size_t i = 0; i < r->row_count; i++) {
    const tbc_bench_row *row = &r->rows[i];
    double y = TOP + (double)i * ROW_PITCH + (ROW_PITCH - BAR_HEIGHT) / 2.0, mid = y + BAR_HEIGHT / 2.0;
    char label[96];
    label_of(row, label, sizeof label);
    text(b, left - 10, mid + 5, 14, "end", "", label);
    if (!row->ok) {
      text(b, left + 8, mid + 5, 14, "start", " fill=\"#B00020\"", "failed (see the table or the JSON)");
      continue;
    }
    double x_med = left + row->stats.median * scale, x10 = left + row->stats.p10 * scale,
           x90 = left + row->stats.p90 * scale;
    tbc_buf_addf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", left, y,
                 x_med - left, BAR_HEIGHT, colour_of(row->backend));
    tbc_buf_addf(b,
                 "<g class=\"whisker\" stroke=\"#222222\" stroke-width=\"1.5\">"
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
                 x10, mid, x90, mid, x10, mid - 7, x10, mid + 7, x90, mid - 7, x90, mid + 7);
    char value[48];
    snprintf(value, sizeof value, "%.3f ms", row->stats.median);
    double x_text = (x90 > x_med ? x90 : x_med) + 8;
    text(b, x_text, mid + 5, 13, "start", " class=\"value\"", value);
  }
  tbc_buf_add(b, "</svg>\n");
}
