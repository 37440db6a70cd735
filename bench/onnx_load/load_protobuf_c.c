/* The peer of the load benchmark: parse an ONNX file with protobuf-c (code generated from Debian's
 * onnx.proto by protoc-c) and report the initializer bytes it holds. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "onnx.pb-c.h"

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  const uint8_t *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return 2;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, (size_t)st.st_size, data);
  if (!m) return 1;
  size_t bytes = 0;
  for (size_t i = 0; i < m->graph->n_initializer; i++) bytes += m->graph->initializer[i]->raw_data.len;
  printf("protobuf-c: %zu initializer bytes\n", bytes);
  onnx__model_proto__free_unpacked(m, NULL);
  munmap((void *)data, (size_t)st.st_size);
  close(fd);
  return 0;
}
