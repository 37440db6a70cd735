/* Ranking of candidate devices (DESIGN.md §4) and the verdict sentence of each.
 *
 * Order: backend tier (CUDA > ROCm > XPU > TPU > Vulkan/OpenCL > CPU), then discrete before integrated,
 * then within a vendor the newer architecture, then more memory, more compute units, Vulkan before
 * OpenCL, and finally list order. For `auto` two more rules apply first: a piece of hardware reached by
 * several APIs is ranked once, through its best usable route; a CPU implementation of Vulkan or OpenCL
 * (lavapipe, PoCL) is not ranked while the native CPU backend is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/error.h"
#include "select/select.h"

typedef enum rank_key { KEY_TIER, KEY_TYPE, KEY_GENERATION, KEY_MEMORY, KEY_UNITS, KEY_API, KEY_ORDER } rank_key;

typedef struct entry {
  const tb_device_info *d;
  tb_outcome outcome;
  const char *verdict;
  size_t order; /* position in the device list */
} entry;

const char *tb_outcome_name(tb_outcome outcome) {
  static const char *const names[] = {"chosen", "ranked", "not_requested", "same_hardware", "cpu_implementation",
                                      "unusable"};
  return (unsigned)outcome < sizeof names / sizeof names[0] ? names[outcome] : "?";
}

static bool is_cpu_impl(const tb_device_info *d) {
  return (d->backend == TB_BACKEND_VULKAN || d->backend == TB_BACKEND_OPENCL) && d->type == TB_DEVICE_CPU;
}

static int tier(const tb_device_info *d) {
  switch (d->backend) {
    case TB_BACKEND_CUDA: return 0;
    case TB_BACKEND_ROCM: return 1;
    case TB_BACKEND_XPU: return 2;
    case TB_BACKEND_TPU: return 3;
    case TB_BACKEND_VULKAN:
    case TB_BACKEND_OPENCL: return is_cpu_impl(d) ? 6 : 4;
    case TB_BACKEND_CPU: return 5;
    default: return 7;
  }
}

/* Preference among the routes to one piece of hardware: native APIs first, then Vulkan, then OpenCL. */
static int route_preference(tb_backend_kind kind) {
  static const int pref[TB_BACKEND_COUNT] = {[TB_BACKEND_CUDA] = 0, [TB_BACKEND_ROCM] = 1, [TB_BACKEND_XPU] = 2,
                                             [TB_BACKEND_TPU] = 3,  [TB_BACKEND_CPU] = 4,  [TB_BACKEND_VULKAN] = 5,
                                             [TB_BACKEND_OPENCL] = 6};
  return (unsigned)kind < TB_BACKEND_COUNT ? pref[kind] : 7;
}

static int type_order(tb_device_type type) {
  switch (type) {
    case TB_DEVICE_DISCRETE_GPU:
    case TB_DEVICE_TPU: return 0;
    case TB_DEVICE_INTEGRATED_GPU: return 1;
    case TB_DEVICE_VIRTUAL_GPU: return 2;
    case TB_DEVICE_OTHER: return 3;
    case TB_DEVICE_CPU: return 4;
  }
  return 5;
}

static const char *type_phrase(tb_device_type type) {
  switch (type) {
    case TB_DEVICE_DISCRETE_GPU: return "a discrete GPU";
    case TB_DEVICE_INTEGRATED_GPU: return "an integrated GPU";
    case TB_DEVICE_VIRTUAL_GPU: return "a virtual GPU";
    case TB_DEVICE_TPU: return "a TPU";
    case TB_DEVICE_CPU: return "a CPU device";
    case TB_DEVICE_OTHER: break;
  }
  return "a device of another type";
}

/* The alphabetic start of an architecture name: "CDNA3" -> "CDNA", "RDNA3" -> "RDNA". */
static size_t family_length(const char *arch) {
  size_t n = 0;
  while ((arch[n] >= 'A' && arch[n] <= 'Z') || (arch[n] >= 'a' && arch[n] <= 'z') || arch[n] == '-') n++;
  return n;
}

/* Architecture generations compare only within a vendor, and for AMD only within one line (CDNA or
 * RDNA), whose gfx numbers are not one sequence. */
static bool generation_comparable(const tb_device_info *a, const tb_device_info *b) {
  if (!a->vendor[0] || strcasecmp(a->vendor, b->vendor) != 0) return false;
  if (!(a->compute_major || a->compute_minor) || !(b->compute_major || b->compute_minor)) return false;
  if (a->backend == TB_BACKEND_ROCM || b->backend == TB_BACKEND_ROCM) {
    size_t fa = family_length(a->architecture), fb = family_length(b->architecture);
    return fa == fb && strncasecmp(a->architecture, b->architecture, fa) == 0;
  }
  return true;
}

static uint64_t memory_of(const tb_device_info *d) { return d->memory_total_known ? d->memory_total : 0; }

#define TB_CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

/* < 0 when a ranks before b; *key is the property that decided. */
static int compare(const entry *a, const entry *b, rank_key *key) {
  const tb_device_info *x = a->d, *y = b->d;
  int c;
  if ((c = TB_CMP(tier(x), tier(y))) != 0) return *key = KEY_TIER, c;
  if ((c = TB_CMP(type_order(x->type), type_order(y->type))) != 0) return *key = KEY_TYPE, c;
  if (generation_comparable(x, y)) {
    if ((c = TB_CMP(y->compute_major, x->compute_major)) != 0) return *key = KEY_GENERATION, c;
    if ((c = TB_CMP(y->compute_minor, x->compute_minor)) != 0) return *key = KEY_GENERATION, c;
  }
  if ((c = TB_CMP(memory_of(y), memory_of(x))) != 0) return *key = KEY_MEMORY, c;
  if ((c = TB_CMP(y->compute_units, x->compute_units)) != 0) return *key = KEY_UNITS, c;
  if (x->backend != y->backend && (c = TB_CMP(route_preference(x->backend), route_preference(y->backend))) != 0)
    return *key = KEY_API, c;
  *key = KEY_ORDER;
  return TB_CMP(a->order, b->order);
}

static void generation_text(const tb_device_info *d, char *buf, size_t cap) {
  if (d->architecture[0]) snprintf(buf, cap, "%s, %d.%d", d->architecture, d->compute_major, d->compute_minor);
  else snprintf(buf, cap, "%d.%d", d->compute_major, d->compute_minor);
}

/* Why `win` ranks above `lose`, as a phrase. */
static const char *why_above(tb_arena *arena, const tb_device_info *win, const tb_device_info *lose, rank_key key) {
  char gw[96], gl[96];
  switch (key) {
    case KEY_TIER:
      if (tier(lose) == 6) return "a CPU implementation of Vulkan or OpenCL ranks last";
      return tb_arena_printf(arena, "the default order puts %s before %s", tb_backend_name(win->backend),
                             tb_backend_name(lose->backend));
    case KEY_TYPE:
      return tb_arena_printf(arena, "%s comes before %s", type_phrase(win->type), type_phrase(lose->type));
    case KEY_GENERATION:
      generation_text(win, gw, sizeof gw);
      generation_text(lose, gl, sizeof gl);
      return tb_arena_printf(arena, "a newer architecture (%s vs %s)", gw, gl);
    case KEY_MEMORY:
      return tb_arena_printf(arena, "more memory (%.1f GiB vs %.1f GiB)", (double)memory_of(win) / 1073741824.0,
                             (double)memory_of(lose) / 1073741824.0);
    case KEY_UNITS:
      return tb_arena_printf(arena, "more compute units (%d vs %d)", win->compute_units, lose->compute_units);
    case KEY_API:
      return "Vulkan is preferred over OpenCL for the same kind of device";
    case KEY_ORDER: break;
  }
  return "identical in every ranked property; the one listed first comes first";
}

/* The name of a CPU implementation without its details: "llvmpipe (LLVM 15.0.6, 256 bits)" -> "llvmpipe". */
static const char *short_name(tb_arena *arena, const char *name) {
  if (!name[0]) return "unnamed";
  const char *paren = strstr(name, " (");
  return paren ? tb_arena_printf(arena, "%.*s", (int)(paren - name), name) : name;
}

static bool selectable(const tb_device_info *d) { return d->usable && d->index >= 0; }

/* The device through which `d`'s hardware is ranked: the usable route with the best preference. */
static const tb_device_info *best_route(const entry *all, size_t n, const tb_device_info *d) {
  const tb_device_info *best = d;
  for (size_t i = 0; i < n; i++) {
    const tb_device_info *o = all[i].d;
    if (o->physical_id != d->physical_id || !selectable(o) || all[i].outcome == TB_OUTCOME_CPU_IMPL) continue;
    if (route_preference(o->backend) < route_preference(best->backend)) best = o;
  }
  return best;
}

static bool native_cpu_usable(const tb_device_list *list) {
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == TB_BACKEND_CPU && selectable(d)) return true;
  }
  return false;
}

/* Outcome and verdict of every device that is not ranked; RANKED for the others. */
static void classify(entry *e, size_t n, bool all_backends, bool cpu_native, tb_arena *arena) {
  for (size_t i = 0; i < n; i++) {
    const tb_device_info *d = e[i].d;
    e[i].outcome = TB_OUTCOME_RANKED;
    if (!selectable(d)) {
      e[i].outcome = TB_OUTCOME_UNUSABLE;
      const char *reason = d->reason[0] ? d->reason : d->index < 0 ? "seen only on the bus; no runtime reaches it"
                                                                    : "marked unusable by its probe";
      e[i].verdict = tb_arena_printf(arena, "rejected: %s", reason);
    } else if (all_backends && cpu_native && is_cpu_impl(d)) {
      e[i].outcome = TB_OUTCOME_CPU_IMPL;
      e[i].verdict = tb_arena_printf(arena, "rejected: a CPU implementation of %s (%s); the native CPU backend is faster",
                                     tb_backend_display_name(d->backend), short_name(arena, d->name));
    }
  }
  if (!all_backends) return;
  for (size_t i = 0; i < n; i++) {
    if (e[i].outcome != TB_OUTCOME_RANKED) continue;
    const tb_device_info *route = best_route(e, n, e[i].d);
    if (route == e[i].d) continue;
    e[i].outcome = TB_OUTCOME_SAME_HARDWARE;
    if (route_preference(route->backend) <= route_preference(TB_BACKEND_CPU))
      e[i].verdict = tb_arena_printf(arena, "same hardware as %s, reached through its native backend", route->device);
    else
      e[i].verdict = tb_arena_printf(arena, "same hardware as %s, reached through %s, which is preferred over %s",
                                     route->device, tb_backend_display_name(route->backend),
                                     tb_backend_display_name(e[i].d->backend));
  }
}

/* Stable insertion sort of the ranked entries (a few dozen at most). */
static void sort_ranked(entry *e, size_t n) {
  for (size_t i = 1; i < n; i++) {
    entry v = e[i];
    size_t j = i;
    rank_key key;
    while (j > 0 && compare(&v, &e[j - 1], &key) < 0) {
      e[j] = e[j - 1];
      j--;
    }
    e[j] = v;
  }
}

static void write_verdicts(entry *ranked, size_t n, tb_arena *arena) {
  for (size_t i = 0; i < n; i++) {
    rank_key key = KEY_ORDER;
    if (i == 0) {
      ranked[0].outcome = TB_OUTCOME_CHOSEN;
      if (n == 1) {
        ranked[0].verdict = "chosen: the only usable candidate";
      } else {
        compare(&ranked[0], &ranked[1], &key);
        ranked[0].verdict = tb_arena_printf(arena, "chosen: the best of %zu usable candidates; it ranks above %s: %s", n,
                                            ranked[1].d->device, why_above(arena, ranked[0].d, ranked[1].d, key));
      }
      continue;
    }
    compare(&ranked[i - 1], &ranked[i], &key);
    ranked[i].verdict = tb_arena_printf(arena, "usable, rank %zu; %s ranks above it: %s", i + 1, ranked[i - 1].d->device,
                                        why_above(arena, ranked[i - 1].d, ranked[i].d, key));
  }
}

static void store(tb_selection *sel, size_t slot, const entry *e, int rank) {
  sel->candidates[slot] = (tb_candidate){.device = e->d, .rank = rank, .chosen = e->outcome == TB_OUTCOME_CHOSEN,
                                         .verdict = e->verdict};
  sel->outcomes[slot] = e->outcome;
}

tb_status tb_rank(tb_selection *sel, const tb_device_list *list, bool all_backends, tb_backend_kind kind) {
  size_t total = tb_device_list_count(list), n = 0;
  entry *e = calloc(total ? total : 1, sizeof *e);
  if (!e) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_select: out of host memory ranking %zu devices", total);
  for (size_t i = 0; i < total; i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (all_backends || d->backend == kind) e[n++] = (entry){.d = d, .order = i};
  }
  classify(e, n, all_backends, native_cpu_usable(list), &sel->arena);
  /* Ranked entries to the front (stable), then sorted. */
  entry *tmp = calloc(n ? n : 1, sizeof *tmp);
  if (!tmp) {
    free(e);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_select: out of host memory ranking %zu devices", total);
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) if (e[i].outcome == TB_OUTCOME_RANKED) tmp[k++] = e[i];
  size_t ranked = k;
  for (size_t i = 0; i < n; i++) if (e[i].outcome != TB_OUTCOME_RANKED && e[i].outcome != TB_OUTCOME_UNUSABLE) tmp[k++] = e[i];
  for (size_t i = 0; i < n; i++) if (e[i].outcome == TB_OUTCOME_UNUSABLE) tmp[k++] = e[i];
  free(e);
  sort_ranked(tmp, ranked);
  write_verdicts(tmp, ranked, &sel->arena);
  sel->candidates = tb_arena_alloc(&sel->arena, (n ? n : 1) * sizeof *sel->candidates);
  sel->outcomes = tb_arena_alloc(&sel->arena, (n ? n : 1) * sizeof *sel->outcomes);
  if (!sel->candidates || !sel->outcomes || sel->arena.failed) {
    free(tmp);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_select: out of host memory writing the verdicts of %zu devices", n);
  }
  for (size_t i = 0; i < n; i++) store(sel, i, &tmp[i], i < ranked ? (int)(i + 1) : 0);
  sel->count = n;
  sel->ranked = ranked;
  free(tmp);
  return TB_OK;
}

void tb_rank_choose(tb_selection *sel, size_t i, const char *verdict) {
  if (i >= sel->ranked) return;
  tb_candidate chosen = sel->candidates[i];
  memmove(&sel->candidates[1], &sel->candidates[0], i * sizeof *sel->candidates);
  sel->candidates[0] = chosen;
  sel->candidates[0].chosen = true;
  sel->candidates[0].rank = 1;
  sel->candidates[0].verdict = verdict;
  sel->outcomes[0] = TB_OUTCOME_CHOSEN;
  for (size_t r = 1; r < sel->ranked; r++) {
    sel->candidates[r].chosen = false;
    sel->candidates[r].rank = (int)(r + 1);
    sel->candidates[r].verdict =
        tb_arena_printf(&sel->arena, "usable, not requested (the request named %s)", chosen.device->device);
    sel->outcomes[r] = TB_OUTCOME_NOT_REQUESTED;
  }
}
