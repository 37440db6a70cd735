/* stdout and stderr of `tb` (see safe_output.h). A model's names, doc strings and the errors that quote
 * them may hold any bytes; printed raw, an ESC starts a terminal escape sequence and a BEL rings. Both
 * streams go through a filter (fopencookie) that writes such bytes as \xNN and keeps the first failed
 * write's errno, so that a lost stdout is an error instead of exit 0. JSON output passes unchanged: it
 * holds no control byte and only UTF-8 (json_out.c, and the library's tb_json_finish). */
#include "safe_output.h"
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "utf8.h"

typedef struct out_filter {
  int fd;
  int error;                /* errno of the first failed write; 0 when none */
  unsigned char pending[4]; /* the start of a UTF-8 sequence cut by the end of the last write */
  size_t n_pending;
} out_filter;

static out_filter filters[2] = {{.fd = STDOUT_FILENO}, {.fd = STDERR_FILENO}};

static bool write_all(out_filter *f, const char *data, size_t n) {
  while (n > 0 && f->error == 0) {
    ssize_t w = write(f->fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      f->error = w < 0 ? errno : EIO;
      return false;
    }
    data += w;
    n -= (size_t)w;
  }
  return f->error == 0;
}

/* Escape bytes[0, n) into out (room for 4 * n bytes); returns the bytes written to out and sets *used to
 * the bytes consumed: all of them unless the end cuts a UTF-8 sequence short and `more` says more follow. */
static size_t escape(const unsigned char *bytes, size_t n, bool more, char *out, size_t *used) {
  static const char hex[] = "0123456789abcdef";
  size_t i = 0, o = 0;
  while (i < n) {
    unsigned char c = bytes[i];
    int len = c < 0x80 ? 1 : tbc_utf8_len(bytes + i, n - i);
    if (len < 0 && more) break;
    bool control = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
    if (len <= 0 || control) {
      out[o++] = '\\';
      out[o++] = 'x';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
      i++;
    } else {
      memcpy(out + o, bytes + i, (size_t)len);
      o += (size_t)len;
      i += (size_t)len;
    }
  }
  *used = i;
  return o;
}

static ssize_t filter_write(void *cookie, const char *data, size_t n) {
  out_filter *f = cookie;
  char out[4 * (512 + 4)];
  unsigned char chunk[512 + 4];
  size_t done = 0;
  while (done < n) {
    size_t take = n - done < 512 ? n - done : 512;
    memcpy(chunk, f->pending, f->n_pending);
    memcpy(chunk + f->n_pending, data + done, take);
    size_t have = f->n_pending + take, used;
    size_t len = escape(chunk, have, true, out, &used);
    f->n_pending = have - used; /* at most 3: the start of one sequence */
    memcpy(f->pending, chunk + used, f->n_pending);
    if (!write_all(f, out, len)) return -1;
    done += take;
  }
  return (ssize_t)n;
}

/* Write a cut-short sequence left at the end as escapes. */
static void flush_pending(out_filter *f) {
  char out[16];
  size_t used;
  size_t len = escape(f->pending, f->n_pending, false, out, &used);
  f->n_pending = 0;
  write_all(f, out, len);
}

static int filter_close(void *cookie) {
  flush_pending(cookie);
  return 0;
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

static FILE *wrap(out_filter *f, const char *mode) {
  cookie_io_functions_t io = {.write = filter_write, .close = filter_close};
  return fopencookie(f, mode, io);
}

int tbc_output_begin(void) {
  if (!fd_open(STDIN_FILENO)) open("/dev/null", O_RDONLY); /* takes fd 0, the lowest free */
  bool out_closed = !fd_open(STDOUT_FILENO);
  if (!fd_open(STDERR_FILENO)) {
    if (out_closed) return TBC_EXIT_IO; /* nothing to say it on */
    open("/dev/null", O_WRONLY);
  }
  if (out_closed) {
    tbc_error("stdout is closed, so nothing tb prints could be read; run it with stdout open (to discard the "
              "output, redirect it to /dev/null)");
    return TBC_EXIT_IO;
  }
  FILE *out = wrap(&filters[0], "w"), *err = wrap(&filters[1], "w");
  if (out) {
    setvbuf(out, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = out;
  }
  if (err) {
    setvbuf(err, NULL, _IOLBF, BUFSIZ);
    stderr = err;
  }
  return TBC_EXIT_OK;
}

int tbc_output_end(int code) {
  bool flushed = fflush(stdout) == 0;
  flush_pending(&filters[0]);
  int error = filters[0].error;
  if (!error && (!flushed || ferror(stdout))) error = EIO;
  if (error) {
    tbc_error("could not write the output to stdout: %s; make room on the disk, or send the output somewhere "
              "writable",
              strerror(error));
    if (code == TBC_EXIT_OK) code = TBC_EXIT_IO;
  }
  fflush(stderr);
  flush_pending(&filters[1]);
  return code;
}
