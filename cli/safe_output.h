/* stdout and stderr of `tb`, safe for a terminal and checked at exit (see safe_output.c). */
#ifndef TB_CLI_SAFE_OUTPUT_H
#define TB_CLI_SAFE_OUTPUT_H

/* Call first in main. Refuses a closed stdout (prints why and returns the I/O exit code; a file the
 * command opens would otherwise take its place), gives a closed stdin or stderr /dev/null, and wraps
 * stdout and stderr so that control bytes other than newline and tab (C0 and DEL) and bytes that are not
 * UTF-8 are written as \xNN. Returns 0 otherwise. */
int tbc_output_begin(void);

/* Call last in main with the command's exit code: flushes stdout and, when a write to it failed (a full
 * disk, a closed pipe or file), prints the reason on stderr and returns the I/O exit code where the
 * command succeeded; otherwise returns code. */
int tbc_output_end(int code);

#endif
