#ifndef PUSHGATE_CLINUX_SHIMS_H
#define PUSHGATE_CLINUX_SHIMS_H

// Linux and glibc calls Swift cannot make directly (struct layouts, syscall numbers),
// and the Linux headers Glibc's module leaves out (epoll, eventfd).
#include <sys/epoll.h>
#include <sys/eventfd.h>

// Data bytes received on a TCP socket so far (TCP_INFO's tcpi_bytes_received, less
// the peer's FIN); -1 if unknown.
long long pg_tcp_bytes_received(int fd);

// Returns freed heap memory to the system (glibc's malloc_trim(0), every arena).
void pg_malloc_trim(void);

// The calling thread's nice value (Linux: each thread has its own); -100 if unknown.
int pg_thread_nice(void);
// Makes the calling thread `by` nice levels nicer (at most 19); its new value, or -100.
int pg_thread_renice(int by);

#endif
