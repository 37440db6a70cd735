/* Built into tb_soak only with -DTB_SANITIZE=ON. AddressSanitizer keeps freed blocks in a quarantine (256 MiB by
 * default) before reusing them, so the RSS of a process that frees memory grows until the quarantine is full: the
 * soak's RSS bound would measure the quarantine, not the program. ASan reads this function at start; 4 MiB keeps
 * the RSS within a few MiB of flat and still catches a use of memory freed a short while ago. ASAN_OPTIONS set by
 * the user still win. (The name is ASan's, hence no tb_ prefix.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=4"; }
