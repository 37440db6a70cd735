/* `tb validate` (cmd_validate.c): the entry point tb.c dispatches to. */
#ifndef TB_CLI_VALIDATE_H
#define TB_CLI_VALIDATE_H

/* argv holds the words after "validate"; returns the exit code. */
int tbc_cmd_validate(int argc, char **argv);

#endif
