/* Column-aligned text tables: a header, rows of cells, and free-form note lines under a row (the
 * "  why: ..." lines of `tb devices`). Columns are separated by two spaces; no trailing spaces. */
#ifndef TB_CLI_TABLE_H
#define TB_CLI_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct tbc_table tbc_table;

/* A table with `columns` columns and these headers (copied). NULL when out of memory. */
tbc_table *tbc_table_new(size_t columns, const char *const *headers);
void tbc_table_free(tbc_table *table);

/* Add a row of `columns` cells (copied; NULL prints as "-"). false when out of memory. */
bool tbc_table_row(tbc_table *table, const char *const *cells);
/* Add a line printed as is after the rows added so far; it does not widen any column. */
bool tbc_table_note(tbc_table *table, const char *line);

void tbc_table_print(const tbc_table *table, FILE *out);

#endif
