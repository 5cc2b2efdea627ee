// linux/tcp.h, not glibc's netinet/tcp.h, whose struct tcp_info stops before the byte
// counters; the two headers cannot be included together.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include "CLinuxShims.h"

long long pg_tcp_bytes_received(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    // Kernels before 4.1 fill less than the whole structure.
    if (length < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received)) return -1;
    // The count follows the receive sequence, in which the peer's FIN takes one number.
    // Linux's states (include/net/tcp_states.h): after a FIN from the peer the socket
    // is in CLOSE_WAIT (8), LAST_ACK (9), CLOSING (11), or CLOSE (7) once both sides
    // are done; a reset also ends in CLOSE and would hide one byte.
    long long received = (long long)info.tcpi_bytes_received;
    switch (info.tcpi_state) {
    case 7: case 8: case 9: case 11:
        return received > 0 ? received - 1 : 0;
    default:
        return received;
    }
}
