#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells sqlite3_bind_* to copy.
static inline void (*pg_sqlite_transient(void))(void *) { return (void (*)(void *))-1; }
