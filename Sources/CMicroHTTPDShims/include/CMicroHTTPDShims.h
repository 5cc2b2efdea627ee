#ifndef PUSHGATE_CMICROHTTPD_SHIMS_H
#define PUSHGATE_CMICROHTTPD_SHIMS_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Decodes %HH in the path and query in place, except %00: libmicrohttpd hands the path
// and query values to us as C strings, so a decoded NUL would silently cut them short
// ("/healthz%00junk" answering as "/healthz"). "%00" stays as those three characters,
// which no route, token or parameter accepts. Used by pg_mhd_start_daemon.
size_t pg_mhd_unescape_keeping_nul(void *cls, struct MHD_Connection *connection, char *text);

// MHD_start_daemon is variadic; this wrapper passes the options pushgate uses. The
// daemon has no listening socket of its own: HTTPServer accepts, checks the first head
// and hands sockets over with MHD_add_connection.
struct MHD_Daemon *pg_mhd_start_daemon(unsigned int flags,
                                       MHD_AccessHandlerCallback handler, void *handler_cls,
                                       MHD_RequestCompletedCallback completed, void *completed_cls,
                                       void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                       void *uri_log_cls,
                                       MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
                                       unsigned int connection_limit,
                                       unsigned int per_ip_connection_limit,
                                       unsigned int connection_timeout_seconds,
                                       unsigned int thread_pool_size,
                                       size_t connection_memory_limit);

// The socket of a connection, and the context MHD_OPTION_NOTIFY_CONNECTION's callback
// set for it (NULL if none).
int pg_mhd_connection_fd(struct MHD_Connection *connection);
void *pg_mhd_socket_context(struct MHD_Connection *connection);

// --- libmicrohttpd's own answers (mhd_own_answers.c) --------------------------------
// Queues one of pushgate's responses (libmicrohttpd's MHD_queue_response itself).
enum MHD_Result pg_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                      struct MHD_Response *response);
// Called on the connection's thread when libmicrohttpd is about to answer a request by
// itself with `status` (400, 413, 414, 431, 505, 500), before anything is sent. A non-zero
// return means the handler answered; libmicrohttpd then sends nothing and closes the
// connection. Zero lets libmicrohttpd's own answer go out.
typedef int (*pg_library_answer_handler)(struct MHD_Connection *connection, unsigned int status);
void pg_mhd_set_library_answer_handler(pg_library_answer_handler handler);
// 1 if libmicrohttpd's own calls to MHD_queue_response reach pushgate's definition.
int pg_mhd_library_answers_interposed(void);

// The client's address as text ("127.0.0.1", "::1"); empty when unknown.
void pg_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

// Whether the checks below know this libmicrohttpd's layout (0.9.75 only); without
// them HTTPServer closes each connection after one request.
int pg_mhd_layout_checks_supported(void);
// From the URI log callback: 0 if the raw request target is visible ASCII and is
// followed by exactly " HTTP/d.d" CRLF (no NUL or bare LF hid part of the line).
int pg_mhd_raw_target_problem(const char *uri);
// From the first access-handler call: 0 if the parsed head lies in the read buffer as
// a strict CRLF head without folds or NULs would (see mhd.c).
int pg_mhd_head_layout_problem(struct MHD_Connection *connection, const char *method, const char *url,
                               const char *version);
// Bytes of the request head libmicrohttpd received.
size_t pg_mhd_head_size(struct MHD_Connection *connection);
// Trailer fields received after a chunked body.
unsigned int pg_mhd_trailer_count(struct MHD_Connection *connection);
// The status libmicrohttpd queued (its own error answers included); 0 if none.
unsigned int pg_mhd_status(struct MHD_Connection *connection);

#endif
