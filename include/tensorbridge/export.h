/* Symbol visibility for the public API: only functions marked TB_API leave the shared library. */
#ifndef TENSORBRIDGE_EXPORT_H
#define TENSORBRIDGE_EXPORT_H
#if defined(__GNUC__) || defined(__clang__)
#define TB_API __attribute__((visibility("default")))
#else
#define TB_API
#endif
#endif
