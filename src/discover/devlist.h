/* Internal: the device list that probes fill, and the per-backend reports for `tb doctor`.
 *
 * A probe adds devices with tb_devlist_add() and records what it tried with tb_report_check().
 * Every string it sets is copied into the list's arena, so probes can pass stack buffers.
 * Memory failure anywhere sets list->arena.failed, and tb_discover() then fails as a whole. */
#ifndef TB_DISCOVER_DEVLIST_H
#define TB_DISCOVER_DEVLIST_H
#include <tensorbridge/device.h>
#include "core/arena.h"

typedef struct tb_report_builder {
  tb_backend_report report;
  tb_check *checks;
  size_t check_cap;
  bool probed;
} tb_report_builder;

struct tb_device_list {
  tb_device_info **devices; /* each allocated alone, so pointers held by probes stay valid */
  size_t count, cap;
  size_t *property_caps;    /* parallel to devices */
  tb_report_builder reports[TB_BACKEND_COUNT];
  tb_arena arena;
  struct tb_device_list *parts[TB_BACKEND_COUNT]; /* lists merged in by tb_devlist_adopt: their arenas hold strings */
  size_t part_count;
};

tb_device_list *tb_devlist_new(void);

/* Add a device of `backend`. Defaults: index = number of indexed devices of that backend so far,
 * device "<backend>:<index>", strings "", usable false, physical_id unique. Returns NULL on OOM. */
tb_device_info *tb_devlist_add(tb_device_list *list, tb_backend_kind backend);
/* Add a device the bus shows but no runtime does: index -1, device "pci:<bus id>". */
tb_device_info *tb_devlist_add_unindexed(tb_device_list *list, tb_backend_kind backend, const char *pci_bus_id);

/* Set a string field of a device (name, vendor, ...): `field` is the address of the field. */
void tb_dev_set(tb_device_list *list, const char **field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Add (or replace) a key/value property. */
void tb_dev_prop(tb_device_list *list, tb_device_info *dev, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Mark a device unusable with a reason and a fix (fix may be NULL). */
void tb_dev_unusable(tb_device_list *list, tb_device_info *dev, const char *fix, const char *reason_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record one thing tried while probing `backend`. */
void tb_report_check(tb_device_list *list, tb_backend_kind backend, bool ok, const char *what, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Set the backend's one-line summary and fix. Later calls replace earlier ones. fix may be NULL. */
void tb_report_set(tb_device_list *list, tb_backend_kind backend, const char *fix, const char *summary_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Move the devices and the reports of `part` (one probe's own list, filled on its thread) to the end of
 * `list`; `list` then owns `part` (whose arena holds the strings) and frees it with itself. At most
 * TB_BACKEND_COUNT parts. A failed part (out of memory) marks `list` failed. */
void tb_devlist_adopt(tb_device_list *list, tb_device_list *part);

/* After all probes ran: counts, availability, default summaries, and routes of shared hardware. */
void tb_devlist_finish(tb_device_list *list);

#endif
