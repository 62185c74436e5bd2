// SQLite: its header for types and constants, and the table of the functions proofkit calls,
// loaded from libsqlite3.so.0 on first use (not linked: see proofkit_library). Only the alarm
// store (`proofkit alarm`) uses it, so no other command maps it.
#ifndef PROOFKIT_CSQLITE_H
#define PROOFKIT_CSQLITE_H

#include <sqlite3.h>

#include "CProofkitShims.h"

/// Every SQLite function proofkit calls (Sources/Storage/SQLite+Calls.swift), one slot each.
#define PROOFKIT_SQLITE_FUNCTIONS(X)                                                               \
    X(sqlite3_open_v2)                                                                             \
    X(sqlite3_close_v2)                                                                            \
    X(sqlite3_busy_timeout)                                                                        \
    X(sqlite3_exec)                                                                                \
    X(sqlite3_prepare_v2)                                                                          \
    X(sqlite3_finalize)                                                                            \
    X(sqlite3_step)                                                                                \
    X(sqlite3_bind_text)                                                                           \
    X(sqlite3_bind_int64)                                                                          \
    X(sqlite3_bind_double)                                                                         \
    X(sqlite3_bind_null)                                                                           \
    X(sqlite3_column_count)                                                                        \
    X(sqlite3_column_type)                                                                         \
    X(sqlite3_column_text)                                                                         \
    X(sqlite3_column_int64)                                                                        \
    X(sqlite3_column_double)                                                                       \
    X(sqlite3_errmsg)                                                                              \
    X(sqlite3_errstr)                                                                              \
    X(sqlite3_extended_errcode)                                                                    \
    X(sqlite3_system_errno)                                                                        \
    X(sqlite3_file_control)                                                                        \
    X(sqlite3_changes)                                                                             \
    X(sqlite3_free)

/// `proofkit_sqlite_api` and `proofkit_sqlite_library()`: libsqlite3.so.0 (Debian: libsqlite3-0).
PROOFKIT_LIBRARY_DECLARE(sqlite, PROOFKIT_SQLITE_FUNCTIONS)

/// Binds UTF-8 `text` (of `length` bytes) to parameter `index` of `statement`, with SQLite taking
/// its own copy (`SQLITE_TRANSIENT`), through `api`.
///
/// Why C: `SQLITE_TRANSIENT` is the destructor pointer `(sqlite3_destructor_type)-1`, a cast that
/// Swift cannot import.
int proofkit_sqlite_bind_text_copy(const proofkit_sqlite_api *api, sqlite3_stmt *statement, int index,
                                   const char *text, int length);

#endif
