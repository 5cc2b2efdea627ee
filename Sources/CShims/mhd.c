#include <arpa/inet.h>
#include <string.h>
#include "CShimsMHD.h"

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
                                       unsigned int connection_limit,
                                       unsigned int per_ip_connection_limit,
                                       unsigned int connection_timeout_seconds,
                                       unsigned int thread_pool_size,
                                       size_t connection_memory_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_UNESCAPE_CALLBACK, pg_mhd_unescape_keeping_nul, NULL,
                            MHD_OPTION_END);
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
