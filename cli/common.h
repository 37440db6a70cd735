/* What every sub-command shares: the exit codes, the error line on stderr, discovery with its error
 * handling, and the commands' entry points. */
#ifndef TB_CLI_COMMON_H
#define TB_CLI_COMMON_H
#include <tensorbridge/tensorbridge.h>

/* Exit codes of `tb` (documented in docs/cli.md and in `tb --help`). */
enum {
  TBC_EXIT_OK = 0,          /* success */
  TBC_EXIT_FAILURE = 1,     /* failure inside the library: discovery failed, out of memory */
  TBC_EXIT_USAGE = 2,       /* bad option, unknown command, unknown backend or device name */
  TBC_EXIT_UNAVAILABLE = 3, /* the requested backend or device is unavailable here */
  TBC_EXIT_IO = 4           /* a file, folder or stdout cannot be read or written (permission, disk full) */
};

/* Print "tb: error: <message>" and a newline on stderr, as one line: a newline, carriage return or tab
 * inside the message (a model's name it quotes) is written as \n, \r, \t. */
void tbc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The exit code for a failed library call. */
int tbc_exit_for_status(tb_status status);
/* The same for a call that reads or writes a file the user named (a model, --input, --output-dir,
 * --record, --weights): a permission error is then the I/O exit code, not "unavailable". */
int tbc_exit_for_file_status(tb_status status);

/* Run discovery of every backend. On failure prints the library's message and returns 1. */
int tbc_discover(tb_device_list **out_list);

/* The sub-commands: argv holds the words after the command name. Each returns an exit code. */
int tbc_cmd_devices(int argc, char **argv);
int tbc_cmd_info(int argc, char **argv);
int tbc_cmd_select(int argc, char **argv);
int tbc_cmd_doctor(int argc, char **argv);
int tbc_cmd_ops(int argc, char **argv);

#endif
