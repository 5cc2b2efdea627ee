// libmicrohttpd answers some malformed requests by itself, in HTML, from one place:
// transmit_error_response_len() in its connection.c (0.9.75 and 1.0.x alike) builds a
// static HTML body and calls MHD_queue_response(). That call goes through the
// library's procedure linkage table, so the definition below, in the executable,
// receives it (ELF symbol interposition). pushgate's own answers are queued with
// pg_mhd_queue_response(), which calls libmicrohttpd's definition directly; every call
// that still reaches MHD_queue_response() is one of the library's own answers, and is
// offered to the handler HTTPServer registers, which writes a problem+json answer on
// the socket itself and has the library close the connection.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include "CMicroHTTPDShims.h"

typedef enum MHD_Result (*pg_queue_function)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static _Atomic(pg_queue_function) pg_library_queue_function;
static _Atomic(pg_library_answer_handler) pg_library_answer;

static pg_queue_function pg_library_queue(void) {
    pg_queue_function function = atomic_load(&pg_library_queue_function);
    if (function == NULL) {
        // The next definition after this executable's: libmicrohttpd's own.
        function = (pg_queue_function)dlsym(RTLD_NEXT, "MHD_queue_response");
        atomic_store(&pg_library_queue_function, function);
    }
    return function;
}

enum MHD_Result pg_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                      struct MHD_Response *response) {
    pg_queue_function queue = pg_library_queue();
    return queue == NULL ? MHD_NO : queue(connection, status, response);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    pg_library_answer_handler handler = atomic_load(&pg_library_answer);
    // MHD_NO tells transmit_error_response_len() that queueing failed: it closes the
    // connection (connection_close_error) without sending anything of its own.
    if (handler != NULL && handler(connection, status_code) != 0) return MHD_NO;
    return pg_mhd_queue_response(connection, status_code, response);
}

void pg_mhd_set_library_answer_handler(pg_library_answer_handler handler) {
    atomic_store(&pg_library_answer, handler);
}

int pg_mhd_library_answers_interposed(void) {
    // The executable's definition is the one the dynamic linker binds libmicrohttpd's
    // calls to when it comes first in the global scope, and libmicrohttpd's own must
    // be found behind it.
    void *global = dlsym(RTLD_DEFAULT, "MHD_queue_response");
    return global == (void *)&MHD_queue_response && pg_library_queue() != NULL
        && (void *)pg_library_queue() != (void *)&MHD_queue_response;
}
