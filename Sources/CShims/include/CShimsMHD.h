#ifndef PUSHGATE_CSHIMS_MHD_H
#define PUSHGATE_CSHIMS_MHD_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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
                                       unsigned int connection_limit,
                                       unsigned int per_ip_connection_limit,
                                       unsigned int connection_timeout_seconds,
                                       unsigned int thread_pool_size,
                                       size_t connection_memory_limit);

// The client's address as text ("127.0.0.1", "::1"); empty when unknown.
void pg_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif
