/* Internal: cJSON helpers shared by the JSON renderings of devices, reports and selections. */
#ifndef TB_JSON_UTIL_H
#define TB_JSON_UTIL_H
#include <cjson/cJSON.h>
#include <tensorbridge/device.h>

/* The device as a cJSON object (NULL on memory failure). */
cJSON *tb_json_device(const tb_device_info *info);
/* The backend report as a cJSON object (NULL on memory failure). */
cJSON *tb_json_report(const tb_backend_report *report);
/* Print `root` (consumed) into *out_json; TB_ERR_OUT_OF_MEMORY when anything failed. */
tb_status tb_json_finish(cJSON *root, bool ok, char **out_json, const char *what);

#endif
