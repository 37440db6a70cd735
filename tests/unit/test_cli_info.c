/* `tb info`: every field of a backend's devices, of one device or of all; JSON arrays of device
 * objects; unknown names exit 2 with the library's message; the capability table. */
#include "test_cli_util.h"

static void info_cpu_shows_name_and_features(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_CPU);
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_non_null(cpu);
  tcli_run r = tcli("info cpu");
  TCLI_ASSERT_EXIT(r, 0);
  char line[4096], expected[512];
  snprintf(expected, sizeof expected, "cpu:0: %s", cpu->name[0] ? cpu->name : "-");
  assert_non_null(tbt_line(r.out, "cpu:0: ", line, sizeof line));
  assert_string_equal(line, expected);
  assert_non_null(tbt_line(r.out, "  name:", line, sizeof line));
  if (cpu->name[0]) TB_ASSERT_CONTAINS(line, cpu->name);
  assert_non_null(tbt_line(r.out, "  features:", line, sizeof line));
  assert_true(cpu->features != 0); /* x86-64 machines have SSE4.2 at least */
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    char word[64];
    snprintf(word, sizeof word, " %s", tb_feature_name((tb_feature)f));
    bool listed = false;
    for (const char *p = strstr(line, word); p && !listed; p = strstr(p + 1, word))
      listed = p[strlen(word)] == ' ' || p[strlen(word)] == '\0';
    if (listed != !!(cpu->features & TB_FEATURE_BIT(f)))
      fail_msg("feature %s: listed %d, library says %d, in \"%s\"", word + 1, listed, !listed, line);
  }
  assert_non_null(tbt_line(r.out, "  dtypes:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " f32");
  assert_non_null(tbt_line(r.out, "  usable:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "yes");
  assert_non_null(tbt_line(r.out, "  backend:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " cpu");
  tcli_free(&r);
  tb_device_list_destroy(list);
}

static void info_prints_every_field_and_property(void **state) {
  (void)state;
  tcli_recorded_spr();
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_CPU);
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_non_null(cpu);
  tcli_run r = tcli("info cpu:0");
  TCLI_ASSERT_EXIT(r, 0);
  char line[4096];
  assert_non_null(tbt_line(r.out, "cpu:0: ", line, sizeof line));
  assert_string_equal(line, "cpu:0: Intel(R) Xeon(R) Gold 5415+");
  assert_non_null(tbt_line(r.out, "  architecture:", line, sizeof line));
  assert_string_equal(line, "  architecture:       Sapphire Rapids");
  assert_non_null(tbt_line(r.out, "  memory total:", line, sizeof line));
  assert_string_equal(line, "  memory total:       64.0 GiB (68719476736 bytes)");
  assert_non_null(tbt_line(r.out, "  memory free:", line, sizeof line));
  assert_string_equal(line, "  memory free:        56.0 GiB (60129542144 bytes)");
  assert_non_null(tbt_line(r.out, "  features:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " avx512fp16 amx_tile amx_bf16 amx_int8");
  assert_non_null(tbt_line(r.out, "  dtypes:", line, sizeof line));
  assert_string_equal(line, "  dtypes:             f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool");
  static const char *const labels[] = {"backend:", "index:", "name:", "vendor:", "type:", "architecture:",
                                       "arch id:", "compute capability:", "compute units:", "memory total:",
                                       "memory free:", "memory type:", "driver version:", "pci bus id:", "uuid:",
                                       "usable:", "dtypes:", "features:", "capability source:", "physical id:",
                                       "routes:", "properties:"};
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "  %s", labels[i]);
    if (!tbt_line(r.out, prefix, line, sizeof line)) fail_msg("no \"%s\" line in:\n%s", labels[i], r.out);
  }
  /* Every property is printed as "key: value". */
  assert_true(cpu->property_count > 5);
  for (size_t i = 0; i < cpu->property_count; i++) {
    char expected[2048];
    snprintf(expected, sizeof expected, "\n    %s: %s\n", cpu->properties[i].key, cpu->properties[i].value);
    TB_ASSERT_CONTAINS(r.out, expected);
  }
  tcli_free(&r);
  tb_device_list_destroy(list);
}

static void info_takes_aliases_and_device_strings(void **state) {
  (void)state;
  tcli_recorded_spr();
  tcli_run all = tcli("info");
  TCLI_ASSERT_EXIT(all, 0);
  tcli_run one = tcli("info cpu:0");
  TCLI_ASSERT_EXIT(one, 0);
  TB_ASSERT_CONTAINS(all.out, one.out); /* the full listing contains the one device */
  tcli_run upper = tcli("info CPU");
  TCLI_ASSERT_EXIT(upper, 0);
  tcli_free(&all);
  tcli_free(&one);
  tcli_free(&upper);
}

static void info_unknown_names_exit_2(void **state) {
  (void)state;
  tcli_run r = tcli("info nosuch");
  TCLI_ASSERT_EXIT(r, 2);
  assert_string_equal(r.out, "");
  TB_ASSERT_CONTAINS(r.err, "tb: error: ");
  TB_ASSERT_CONTAINS(r.err, "'nosuch'");
  TB_ASSERT_CONTAINS(r.err, "vulkan"); /* the valid names */
  tcli_free(&r);

  tcli_expect_err("info cpu:7", 2, "cpu:7");

  tcli_expect_err("info warp:0", 2, "warp");

  tcli_expect_err("info cpu cuda", 2, "unexpected argument 'cuda'");
}

static void info_backend_without_devices_says_why(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_ROCM);
  const tb_backend_report *rep = tb_device_list_report(list, TB_BACKEND_ROCM);
  if (rep->device_count) { /* an AMD GPU here: this test wants a machine without one, as CI is */
    tb_device_list_destroy(list);
    skip();
  }
  char expected[1024];
  snprintf(expected, sizeof expected, "rocm: no devices: %s\n", rep->summary[0] ? rep->summary : "-");
  tcli_run r = tcli("info amd");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, expected);
  tcli_free(&r);
  tcli_expect_out("info rocm --json", 0, "[]\n");
  tb_device_list_destroy(list);
}

static void info_json_is_an_array_of_devices(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(0);
  tcli_run r = tcli("info --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  assert_true(cJSON_IsArray(root));
  assert_int_equal((size_t)cJSON_GetArraySize(root), tb_device_list_count(list));
  const cJSON *d;
  size_t i = 0;
  cJSON_ArrayForEach(d, root) assert_string_equal(tcli_json_str(d, "device"), tb_device_list_get(list, i++)->device);
  cJSON_Delete(root);
  tcli_free(&r);

  r = tcli("info cpu --json");
  TCLI_ASSERT_EXIT(r, 0);
  root = tcli_json(r.out);
  assert_int_equal((size_t)cJSON_GetArraySize(root), tbt_count(list, TB_BACKEND_CPU));
  const cJSON *cpu = cJSON_GetArrayItem(root, 0);
  assert_string_equal(tcli_json_str(cpu, "device"), "cpu:0");
  assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(cpu, "features")));
  assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cpu, "properties")));
  cJSON_Delete(root);
  tcli_free(&r);
  tb_device_list_destroy(list);
}

static void capabilities_table_lists_every_row(void **state) {
  (void)state;
  size_t count = tb_capability_table_count();
  assert_true(count > 0);
  tcli_run r = tcli("info --capabilities");
  TCLI_ASSERT_EXIT(r, 0);
  char line[4096];
  assert_non_null(tbt_line(r.out, "VENDOR ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "ARCHITECTURE");
  TB_ASSERT_CONTAINS(line, "FEATURES");
  tcli_run j = tcli("info --capabilities --json");
  TCLI_ASSERT_EXIT(j, 0);
  cJSON *root = tcli_json(j.out);
  assert_int_equal((size_t)cJSON_GetArraySize(root), count);
  for (size_t i = 0; i < count; i++) {
    tb_capability_row row = {.size = sizeof row};
    TB_ASSERT_OK(tb_capability_table_get(i, &row));
    /* The text table: a row starting with vendor and key, then the matrix unit and source lines. */
    char prefix[256], expected[4096];
    snprintf(prefix, sizeof prefix, "%s ", row.vendor);
    snprintf(expected, sizeof expected, "  source: %s\n", row.source[0] ? row.source : "-");
    TB_ASSERT_CONTAINS(r.out, expected);
    snprintf(expected, sizeof expected, " %s ", row.key);
    TB_ASSERT_CONTAINS(r.out, expected);
    /* The JSON, row for row. */
    const cJSON *o = cJSON_GetArrayItem(root, (int)i);
    assert_string_equal(tcli_json_str(o, "vendor"), row.vendor);
    assert_string_equal(tcli_json_str(o, "key"), row.key);
    assert_string_equal(tcli_json_str(o, "architecture"), row.architecture);
    assert_string_equal(tcli_json_str(o, "matrix_unit"), row.matrix_unit);
    assert_string_equal(tcli_json_str(o, "memory_type"), row.memory_type);
    assert_string_equal(tcli_json_str(o, "source"), row.source);
    const cJSON *features = cJSON_GetObjectItemCaseSensitive(o, "features"), *f;
    uint64_t bits = 0;
    cJSON_ArrayForEach(f, features) {
      tb_feature feature;
      TB_ASSERT_OK(tb_feature_parse(f->valuestring, &feature));
      bits |= TB_FEATURE_BIT(feature);
    }
    assert_int_equal(bits, row.features);
    const cJSON *dtypes = cJSON_GetObjectItemCaseSensitive(o, "dtypes"), *t;
    tb_dtype_set set = 0;
    cJSON_ArrayForEach(t, dtypes) {
      tb_dtype dtype;
      TB_ASSERT_OK(tb_dtype_parse(t->valuestring, &dtype));
      set |= TB_DTYPE_BIT(dtype);
    }
    assert_int_equal(set, row.dtypes);
  }
  /* Rows every user looks for. */
  TB_ASSERT_CONTAINS(r.out, "Hopper");
  TB_ASSERT_CONTAINS(r.out, "CDNA3");
  cJSON_Delete(root);
  tcli_free(&j);
  tcli_free(&r);
  tcli_expect_err("info cpu --capabilities", 2, "'cpu'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(info_cpu_shows_name_and_features, tbt_setup_clean_env),
      cmocka_unit_test_setup(info_prints_every_field_and_property, tbt_setup_clean_env),
      cmocka_unit_test_setup(info_takes_aliases_and_device_strings, tbt_setup_clean_env),
      cmocka_unit_test_setup(info_unknown_names_exit_2, tbt_setup_clean_env),
      cmocka_unit_test_setup(info_backend_without_devices_says_why, tbt_setup_clean_env),
      cmocka_unit_test_setup(info_json_is_an_array_of_devices, tbt_setup_clean_env),
      cmocka_unit_test_setup(capabilities_table_lists_every_row, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
