/* `tb`: the command-line face of TensorBridge. main() dispatches to one sub-command per file
 * (cmd_devices.c, cmd_info.c, cmd_select.c, cmd_doctor.c, cmd_run.c, cmd_ops.c, ...) and answers --help and --version itself.
 * The tool uses only the public headers, as any user's program would. Everything it prints goes through
 * safe_output.c, which escapes control bytes and turns a failed write to stdout into exit code 4. */
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "run.h"
#include "convert.h"
#include "validate.h"
#include "bench_common.h"
#include "safe_output.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"devices", tbc_cmd_devices, "list every device, usable or not, and why not"},
    {"info", tbc_cmd_info, "everything known about the devices of a backend, or one device"},
    {"select", tbc_cmd_select, "print the device a request picks (TB_BACKEND or auto by default)"},
    {"doctor", tbc_cmd_doctor, "what each backend tried, what failed, and what to fix"},
    {"run", tbc_cmd_run, "run an ONNX model on a backend at a level and summarise its outputs"},
    {"convert", tbc_cmd_convert, "convert safetensors and .npy files into each other and between dtypes"},
    {"validate", tbc_cmd_validate, "compare a model's outputs on backends and levels with the CPU O0 reference"},
    {"bench", tbc_cmd_bench, "time a model on backends at levels: latency, throughput, memory, cost, chart"},
    {"ops", tbc_cmd_ops, "the operators TensorBridge runs: opsets, dtypes, and the backends and levels with kernels"},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static void print_help(FILE *out) {
  fputs("tb - find, choose and describe the machine-learning accelerators of this machine, and run models\n"
        "\n"
        "Usage: tb <command> [options]\n"
        "       tb help <command>\n"
        "       tb --help | --version\n"
        "\n"
        "Commands:\n",
        out);
  for (size_t i = 0; i < COMMAND_COUNT; i++) fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fputs("  help      show the help of a command\n"
        "\n"
        "Options:\n"
        "  -h, --help     show this help\n"
        "  -V, --version  show the version\n"
        "\n"
        "Every command takes --help; devices, info, select, doctor, run, validate, bench and ops take --json.\n"
        "\n"
        "Environment:\n"
        "  TB_BACKEND       the request `tb select` uses when given none: auto, cpu, cuda, rocm, xpu,\n"
        "                   tpu, vulkan, opencl (aliases nvidia, amd, hip, intel, level_zero, xla)\n"
        "  TB_CPU_FEATURES  mask CPU features, e.g. -amx,-avx512f\n"
        "  TB_<VENDOR>_LIB  where to find a vendor runtime, e.g. TB_CUDA_LIB=/opt/lib/libcuda.so.1\n"
        "  NO_COLOR         honoured: tb never writes colour\n"
        "\n"
        "Exit codes:\n"
        "  0  success\n"
        "  1  failure inside the library (discovery failed, out of memory)\n"
        "  2  usage error (bad option, unknown command, unknown backend or device name)\n"
        "  3  the requested backend or device is unavailable here\n"
        "  4  a file, folder or stdout cannot be read or written (permission denied, disk full)\n"
        "\n"
        "Details: docs/cli.md; JSON keys: docs/json.md.\n",
        out);
}

static const command *find_command(const char *name) {
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static int unknown_command(const char *name) {
  tbc_error("unknown command '%s'; the commands are devices, info, select, doctor, run, convert, validate, bench, ops, help; see 'tb --help'", name);
  return TBC_EXIT_USAGE;
}

/* `tb help [command]`. */
static int run_help(int argc, char **argv) {
  if (argc == 0) {
    print_help(stdout);
    return TBC_EXIT_OK;
  }
  if (argc > 1) {
    tbc_error("'tb help' takes one command name, but got '%s' too; see 'tb --help'", argv[1]);
    return TBC_EXIT_USAGE;
  }
  if (strcmp(argv[0], "help") == 0) {
    print_help(stdout);
    return TBC_EXIT_OK;
  }
  const command *c = find_command(argv[0]);
  if (!c) return unknown_command(argv[0]);
  char help_flag[] = "--help";
  char *help_argv[] = {help_flag, NULL};
  return c->run(1, help_argv);
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    tbc_error("no command given; see 'tb --help'");
    return TBC_EXIT_USAGE;
  }
  const char *first = argv[1];
  if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0) {
    print_help(stdout);
    return TBC_EXIT_OK;
  }
  if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0) {
    printf("tb %s\n", tb_version());
    return TBC_EXIT_OK;
  }
  if (strcmp(first, "help") == 0) return run_help(argc - 2, argv + 2);
  if (first[0] == '-') {
    tbc_error("unknown option '%s'; put options after the command, as in 'tb devices --json'; see 'tb --help'", first);
    return TBC_EXIT_USAGE;
  }
  const command *c = find_command(first);
  if (!c) return unknown_command(first);
  return c->run(argc - 2, argv + 2);
}

int main(int argc, char **argv) {
  int code = tbc_output_begin();
  if (code != TBC_EXIT_OK) return code;
  return tbc_output_end(dispatch(argc, argv));
}
