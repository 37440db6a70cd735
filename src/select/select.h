/* Internal: the selection object shared by the request parser, the ranking, the explanation and the
 * JSON rendering. Everything a selection hands out lives in its arena. */
#ifndef TB_SELECT_SELECT_H
#define TB_SELECT_SELECT_H
#include <stdbool.h>
#include <tensorbridge/policy.h>
#include "core/arena.h"
#include "select/request.h"

/* Why a candidate is where it is; the JSON "outcome" key names these. */
typedef enum tb_outcome {
  TB_OUTCOME_CHOSEN = 0,
  TB_OUTCOME_RANKED,        /* usable and ranked below the chosen device */
  TB_OUTCOME_NOT_REQUESTED, /* usable, but the request named another device */
  TB_OUTCOME_SAME_HARDWARE, /* usable, but its hardware is ranked through a better route */
  TB_OUTCOME_CPU_IMPL,      /* a CPU implementation of Vulkan/OpenCL; the native CPU backend wins */
  TB_OUTCOME_UNUSABLE       /* not usable here; the verdict has the reason */
} tb_outcome;

const char *tb_outcome_name(tb_outcome outcome);

struct tb_selection {
  const tb_device_info *device; /* the chosen device */
  const char *request;          /* as given, or "auto" */
  const char *source;           /* "argument", "TB_BACKEND", "default" */
  tb_candidate *candidates;     /* ranked first (rank order), then the others in list order */
  tb_outcome *outcomes;         /* parallel to candidates */
  size_t count;
  size_t ranked;                /* candidates [0, ranked) have rank >= 1 */
  const char *explanation;
  tb_arena arena;
};

/* What a request names, once parsed. */
typedef struct tb_request {
  const char *text;     /* the request as given (copied into the selection's arena) */
  const char *source;   /* "argument", "TB_BACKEND", "default" */
  bool is_auto;
  tb_backend_kind kind; /* when not auto */
  const tb_device_info *device; /* when the request names one device ("cuda:1"); else NULL */
} tb_request;

/* Resolve the parsed request against the list. Unknown names are TB_ERR_NOT_FOUND, malformed device
 * indices TB_ERR_INVALID_ARGUMENT, with the valid forms. */
tb_status tb_request_resolve(const tb_device_list *list, const tb_request_spec *spec, tb_arena *arena, tb_request *out);
/* The error for a backend (or device) the request named that has nothing usable. */
tb_status tb_request_unavailable(const tb_device_list *list, const tb_request *req);
/* How the request is quoted in messages: "TB_BACKEND=cuda" or "backend 'cuda'". */
const char *tb_request_quote(const tb_request *req, tb_arena *arena);
/* "CUDA", "ROCm", "Intel XPU (Level Zero)", ... */
const char *tb_backend_display_name(tb_backend_kind kind);

/* Fill sel->candidates with the devices of `list` (all of them when all_backends, else those of
 * `kind`), ranked best first, with verdicts for all but the first ranked one. all_backends also applies
 * the auto-only rules: one route per physical device, CPU implementations behind the native CPU. */
tb_status tb_rank(tb_selection *sel, const tb_device_list *list, bool all_backends, tb_backend_kind kind);
/* Make candidate i the chosen one at rank 1 (moving it to the front), with `verdict`. */
void tb_rank_choose(tb_selection *sel, size_t i, const char *verdict);

/* Build sel->explanation from the filled selection. */
void tb_selection_build_explanation(tb_selection *sel);

#endif
