#include <arpa/inet.h>
#include <errno.h>
#include <unistd.h>
#include <string.h>
#include "CMicroHTTPDShims.h"

static int pg_hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

size_t pg_mhd_unescape_keeping_nul(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    size_t read = 0, written = 0;
    while (text[read] != 0) {
        int high = text[read] == '%' ? pg_hex_value(text[read + 1]) : -1;
        int low = high >= 0 ? pg_hex_value(text[read + 2]) : -1;
        if (low >= 0 && (high | low) != 0) {
            text[written++] = (char)(high * 16 + low);
            read += 3;
        } else {
            text[written++] = text[read++];
        }
    }
    text[written] = 0;
    return written;
}

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
                                       size_t connection_memory_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_UNESCAPE_CALLBACK, pg_mhd_unescape_keeping_nul, NULL,
                            MHD_OPTION_END);
}

int pg_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void *pg_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

void pg_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    if (length == 0) return;
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buffer, (socklen_t)length);
    } else if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buffer, (socklen_t)length);
    }
}

// --- Checks on the head as libmicrohttpd 0.9.75 laid it out -------------------------
// libmicrohttpd parses a head in place in its read buffer: every line end (CRLF, or a
// bare LF, which it accepts) becomes NUL bytes, the colon of each field becomes NUL, and
// names, values, method, target and version are pointers into that buffer. A strict
// CRLF head therefore leaves one exact layout: each field name starts two bytes after
// the previous value's end. A bare LF (one byte), a NUL inside a value (strlen stops
// early) or a folded line (moved to another block) breaks it. That is how the heads
// of the second and later requests on a kept-alive connection, which never pass
// through the raw check, are still held to it.

int pg_mhd_layout_checks_supported(void) {
    const char *version = MHD_get_version();
    return version != NULL && strcmp(version, "0.9.75") == 0;
}

int pg_mhd_raw_target_problem(const char *uri) {
    if (uri == NULL) return 1;
    size_t length = strlen(uri);
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)uri[i];
        if (c < 0x21 || c > 0x7E) return 2;
    }
    // The NUL ending `uri` must be the space before "HTTP/d.d", and the version must
    // be followed by CRLF (two NULs); each test stops at the first mismatch, so no byte
    // past the line's end is read.
    const char *v = uri + length + 1;
    if (v[0] != 'H' || v[1] != 'T' || v[2] != 'T' || v[3] != 'P' || v[4] != '/') return 3;
    if (v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9') return 3;
    if (v[8] != 0 || v[9] != 0) return 4;
    return 0;
}

struct pg_layout_walk {
    const char *expect;
    int problem;
};

static enum MHD_Result pg_layout_step(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct pg_layout_walk *walk = cls;
    if (key != walk->expect || value == NULL) {
        walk->problem = 5;
        return MHD_NO;
    }
    const char *after = key + strlen(key) + 1;
    while (after < value && (*after == ' ' || *after == '\t')) after++;
    if (after != value) {
        walk->problem = 5;
        return MHD_NO;
    }
    const char *end = value + strlen(value);
    if (end[1] != 0) {
        walk->problem = 6;
        return MHD_NO;
    }
    walk->expect = end + 2;
    return MHD_YES;
}

int pg_mhd_head_layout_problem(struct MHD_Connection *connection, const char *method, const char *url,
                               const char *version) {
    if (method == NULL || url == NULL || version == NULL) return 10;
    if (url != method + strlen(method) + 1) return 11;
    const char *end = version + strlen(version);
    if (end[1] != 0) return 4;
    struct pg_layout_walk walk = { end + 2, 0 };
    MHD_get_connection_values(connection, MHD_HEADER_KIND, pg_layout_step, &walk);
    if (walk.problem != 0) return walk.problem;
    // The empty line that ends the head: CRLF, two NULs.
    if (walk.expect[0] != 0 || walk.expect[1] != 0) return 7;
    return 0;
}

unsigned int pg_mhd_trailer_count(struct MHD_Connection *connection) {
    int count = MHD_get_connection_values(connection, MHD_FOOTER_KIND, NULL, NULL);
    return count < 0 ? 0 : (unsigned int)count;
}

size_t pg_mhd_head_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

unsigned int pg_mhd_status(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS);
    return info == NULL ? 0 : info->http_status;
}
