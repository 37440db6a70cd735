/* How long device discovery takes, and which probe takes it.
 *
 *   discover_bench [--runs N] [--tool PATH] [--json]
 *
 * - cold: the first tb_discover(NULL) of a process, which loads the vendor runtimes (measured in a fresh
 *   child process, --runs times);
 * - warm: later calls in the same process, runtimes already loaded (median and p90 of --runs);
 * - per probe: tb_discover with one backend's bit, cold (a fresh child each) and warm, and each probe's
 *   share of the sum of the warm probe times. The probes run on their own threads, so a full discovery
 *   takes about as long as the slowest probe, not the sum;
 * - with --tool PATH (the `tb` executable): `tb devices` as a whole process, started --runs times after
 *   one unmeasured start (warm file cache), which is what a user waits for.
 * Only the public API and libc. Numbers for this repository's machines are in docs/discovery.md. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_util.h"

extern char **environ;

#define MAX_RUNS 1000

static const char *const usage =
    "Usage: discover_bench [--runs N] [--tool PATH] [--json]\n"
    "Times tb_discover cold (first call of a process) and warm, per probe and in all, and with --tool\n"
    "PATH the command `PATH devices` as a whole process.\n";

/* Seconds one tb_discover(mask) takes; a negative value when it fails. */
static double time_discover(uint32_t mask) {
  tb_discover_options options = {.size = sizeof options, .backends = mask};
  tb_device_list *list = NULL;
  double t0 = bench_now();
  tb_status st = tb_discover(&options, &list);
  double t = bench_now() - t0;
  tb_device_list_destroy(list);
  return st == TB_OK ? t : -1.0;
}

/* The first tb_discover(mask) of a fresh child process, in seconds; negative on failure. */
static double time_cold(uint32_t mask) {
  int fds[2];
  if (pipe(fds) != 0) return -1.0;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1.0;
  }
  if (pid == 0) {
    close(fds[0]);
    double t = time_discover(mask);
    ssize_t w = write(fds[1], &t, sizeof t);
    _exit(w == (ssize_t)sizeof t ? 0 : 1);
  }
  close(fds[1]);
  double t = -1.0;
  if (read(fds[0], &t, sizeof t) != (ssize_t)sizeof t) t = -1.0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1.0;
}

/* `tool devices` as a process, stdout and stderr to /dev/null; seconds, negative on failure. */
static double time_tool(const char *tool) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  char *argv[] = {(char *)tool, "devices", NULL};
  pid_t pid;
  double t0 = bench_now();
  int rc = posix_spawn(&pid, tool, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1.0;
  int status = 0;
  waitpid(pid, &status, 0);
  double t = bench_now() - t0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1.0;
}

typedef enum { KIND_WARM, KIND_COLD, KIND_TOOL } sample_kind;

/* --runs samples of one measurement; false (with a message) when one fails. */
static bool measure(sample_kind kind, uint32_t mask, const char *tool, int runs, bench_times *out) {
  static double times[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    times[i] = kind == KIND_WARM ? time_discover(mask) : kind == KIND_COLD ? time_cold(mask) : time_tool(tool);
    if (times[i] < 0) {
      if (kind == KIND_TOOL)
        fprintf(stderr, "discover_bench: `%s devices` could not be run or failed\n", tool);
      else
        fprintf(stderr, "discover_bench: tb_discover (backends 0x%x) failed: %s\n", mask, tb_last_error());
      return false;
    }
  }
  *out = bench_summarize(times, (size_t)runs);
  return true;
}

typedef struct row {
  const char *name;
  bench_times cold, warm;
} row;

static void print_text(const row *rows, int count, double probe_sum, bool have_tool, bench_times tool, int runs) {
  printf("tb_discover, %d runs each (median / p90, ms); cold = first call of a fresh process\n\n", runs);
  printf("%-8s %17s %17s %7s\n", "PROBE", "COLD", "WARM", "SHARE");
  for (int i = 0; i < count; i++) {
    char share[16] = "";
    if (i < count - 1) snprintf(share, sizeof share, "%5.1f%%", probe_sum > 0 ? 100.0 * rows[i].warm.median / probe_sum : 0.0);
    printf("%-8s %8.1f / %6.1f %8.1f / %6.1f %7s\n", rows[i].name, rows[i].cold.median * 1e3, rows[i].cold.p90 * 1e3,
           rows[i].warm.median * 1e3, rows[i].warm.p90 * 1e3, share);
  }
  printf("\nshare: of the sum of the warm probe times (%.1f ms); `all` runs the probes at once\n", probe_sum * 1e3);
  if (have_tool) printf("`tb devices` as a process: %.1f / %.1f ms\n", tool.median * 1e3, tool.p90 * 1e3);
}

static void print_json(const row *rows, int count, double probe_sum, bool have_tool, bench_times tool, int runs) {
  bench_buf b = {0};
  bench_buf_addf(&b, "{\"benchmark\":\"discover\",\"runs\":%d,\"probes\":[", runs);
  for (int i = 0; i < count; i++) {
    bench_buf_addf(&b, "%s{\"probe\":", i ? "," : "");
    bench_buf_json_string(&b, rows[i].name);
    bench_buf_addf(&b, ",\"cold_ms\":{\"median\":%.3f,\"p90\":%.3f},\"warm_ms\":{\"median\":%.3f,\"p90\":%.3f}",
                   rows[i].cold.median * 1e3, rows[i].cold.p90 * 1e3, rows[i].warm.median * 1e3, rows[i].warm.p90 * 1e3);
    if (i < count - 1) bench_buf_addf(&b, ",\"share\":%.4f", probe_sum > 0 ? rows[i].warm.median / probe_sum : 0.0);
    bench_buf_addf(&b, "}");
  }
  bench_buf_addf(&b, "]");
  if (have_tool) bench_buf_addf(&b, ",\"tool_devices_ms\":{\"median\":%.3f,\"p90\":%.3f}", tool.median * 1e3, tool.p90 * 1e3);
  bench_buf_addf(&b, "}\n");
  if (!b.failed) fputs(b.data, stdout);
  bench_buf_free(&b);
}

int main(int argc, char **argv) {
  int runs = 10;
  const char *tool = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      char *end = NULL;
      long n = strtol(argv[++i], &end, 10);
      if (!end || *end || n < 1 || n > MAX_RUNS) {
        fprintf(stderr, "discover_bench: --runs %s is not a count from 1 to %d\n", argv[i], MAX_RUNS);
        return 2;
      }
      runs = (int)n;
    } else if (strcmp(argv[i], "--tool") == 0 && i + 1 < argc) {
      tool = argv[++i];
      if (access(tool, X_OK) != 0) {
        fprintf(stderr, "discover_bench: --tool %s is not an executable file; give the path of tb\n", tool);
        return 2;
      }
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "discover_bench: unknown argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  row rows[TB_BACKEND_COUNT + 1];
  int count = 0;
  double probe_sum = 0;
  /* Cold first, in children, while this process has loaded nothing. */
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    rows[count].name = tb_backend_name((tb_backend_kind)k);
    if (!measure(KIND_COLD, 1u << k, NULL, runs, &rows[count].cold)) return 1;
    count++;
  }
  rows[count].name = "all";
  if (!measure(KIND_COLD, 0, NULL, runs, &rows[count].cold)) return 1;
  if (time_discover(0) < 0) { /* loads every runtime in this process: the warm runs start here */
    fprintf(stderr, "discover_bench: tb_discover failed: %s\n", tb_last_error());
    return 1;
  }
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    if (!measure(KIND_WARM, 1u << k, NULL, runs, &rows[k].warm)) return 1;
    probe_sum += rows[k].warm.median;
  }
  if (!measure(KIND_WARM, 0, NULL, runs, &rows[count].warm)) return 1;
  count++;
  bench_times tool_times = {0, 0};
  if (tool) {
    if (time_tool(tool) < 0) { /* the unmeasured start that warms the file cache */
      fprintf(stderr, "discover_bench: `%s devices` could not be run or failed\n", tool);
      return 1;
    }
    if (!measure(KIND_TOOL, 0, tool, runs, &tool_times)) return 1;
  }
  if (json)
    print_json(rows, count, probe_sum, tool != NULL, tool_times, runs);
  else
    print_text(rows, count, probe_sum, tool != NULL, tool_times, runs);
  return 0;
}
