/* UTF-8 checking for what `tb` prints: the JSON writer replaces what is not UTF-8, the terminal output
 * escapes it (see safe_output.c). */
#ifndef TB_CLI_UTF8_H
#define TB_CLI_UTF8_H
#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence at p, of which avail bytes are known; 0 when the
 * bytes there are not UTF-8 (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF); -1
 * when the first avail bytes are a valid beginning that needs more bytes. */
int tbc_utf8_len(const unsigned char *p, size_t avail);

#endif
