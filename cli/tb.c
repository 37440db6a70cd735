/* TEMP main: replaced by the CLI. */
#include <stdio.h>
#include <tensorbridge/tensorbridge.h>
int main(void) { printf("%s\n", tb_version()); return 0; }
