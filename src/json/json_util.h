/* Internal: cJSON helpers shared by the JSON renderings of devices, reports and selections. */
#ifndef TB_JSON_UTIL_H
#define TB_JSON_UTIL_H
#include <cjson/cJSON.h>
#include <tensorbridge/device.h>

/* The device as a cJSON object (NULL on memory failure). */
cJSON *tb_json_device(const tb_device_info *info);
/* The backend report as a cJSON object (NULL on memory failure). */
cJSON *tb_json_report(const tb_backend_report *report);
/* Print `root` (consumed) into *out_json, always valid UTF-8 (tb_json_repair_utf8); TB_ERR_OUT_OF_MEMORY
 * when anything failed. */
tb_status tb_json_finish(cJSON *root, bool ok, char **out_json, const char *what);
/* `text` (malloc'd JSON, consumed) with every byte that is not part of well-formed UTF-8 written as the
 * escape \ufffd, and DEL as \u007f: the same pointer when there is none, a new one otherwise, NULL when
 * out of memory. Such bytes can only sit inside string literals, so the result is the same JSON with
 * valid strings. */
char *tb_json_repair_utf8(char *text);

#endif
