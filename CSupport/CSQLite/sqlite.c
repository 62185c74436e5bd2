// libsqlite3, loaded on first use (see CSQLite.h).
#include "CSQLite.h"

PROOFKIT_LIBRARY_DEFINE(sqlite, "libsqlite3.so.0", "libsqlite3-0", PROOFKIT_SQLITE_FUNCTIONS, NULL)

int proofkit_sqlite_bind_text_copy(const proofkit_sqlite_api *api, sqlite3_stmt *statement, int index,
                                   const char *text, int length) {
    return api->sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
