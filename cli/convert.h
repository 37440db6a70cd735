/* `tb convert` (cmd_convert.c): safetensors and .npy files converted into each other and between dtypes. */
#ifndef TB_CLI_CONVERT_H
#define TB_CLI_CONVERT_H

/* argv holds the words after "convert"; returns the exit code. */
int tbc_cmd_convert(int argc, char **argv);

#endif
